#!/bin/sh
# Writes server.properties from the KAFKA_* environment (as apache/kafka does: KAFKA_NODE_ID ->
# node.id; a double underscore stands for an underscore), formats the storage on first start
# (CLUSTER_ID, or a fixed default for a single-node demo) and runs the broker in the foreground.
set -eu
config=/opt/kafka/config/server.properties
: > "$config"
env | sort | while IFS='=' read -r name value; do
  case "$name" in
    KAFKA_HEAP_OPTS|KAFKA_OPTS|KAFKA_JVM_PERFORMANCE_OPTS|KAFKA_LOG4J_OPTS) continue ;;
    KAFKA_*) key=$(printf '%s' "${name#KAFKA_}" | sed -e 's/__/@/g' -e 's/_/./g' -e 's/@/_/g' | tr 'A-Z' 'a-z')
             printf '%s=%s\n' "$key" "$value" >> "$config" ;;
  esac
done
grep -q '^log.dirs=' "$config" || echo 'log.dirs=/var/lib/kafka/data' >> "$config"
cat > /opt/kafka/config/log4j.properties <<'LOG4J'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
LOG4J
jvm="${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true -Dlog4j.configuration=file:/opt/kafka/config/log4j.properties ${KAFKA_OPTS:-}"
# shellcheck disable=SC2086
java $jvm -cp '/opt/kafka/libs/*' kafka.tools.StorageTool format --cluster-id="${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}" -c "$config" --ignore-formatted
# shellcheck disable=SC2086
exec java $jvm -cp '/opt/kafka/libs/*' kafka.Kafka "$config"
