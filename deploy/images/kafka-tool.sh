#!/bin/sh
# Kafka's command-line tools by the name of their script in Kafka's distribution (this image
# carries the jars only): kafka-broker-api-versions.sh -> kafka.admin.BrokerApiVersionsCommand.
set -eu
case "$(basename "$0")" in
  kafka-broker-api-versions.sh) main=kafka.admin.BrokerApiVersionsCommand ;;
  *) echo "unknown tool $(basename "$0")" >&2; exit 2 ;;
esac
exec java -Xmx128m -Dlog4j.configuration=file:/opt/kafka/config/log4j.properties -cp '/opt/kafka/libs/*' "$main" "$@"
