# One image for every Switchyard service; the service is chosen at run time:
#   docker build -t switchyard:0.1.0 .
#   docker run --rm -e KAFKA_BROKERS=… -e SCHEMA_REGISTRY_URL=… switchyard:0.1.0 ingest
#   (or -e SWITCHYARD_SERVICE=ingest; services: setup, control, ingest, fanout, delivery, audiences)
# Stages: build (all dependencies, compile TypeScript), deps (production dependencies only),
# runtime (node, the production node_modules, the compiled dist/ folders; runs as a non-root user).
# test/deploy.test.ts checks that every file copied here exists and that the start command runs
# the built code; keep the package.json lists below in step with the npm workspaces.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/platform/package.json packages/platform/
COPY packages/cli/package.json packages/cli/
COPY packages/analytics/package.json packages/analytics/
COPY services/setup/package.json services/setup/
COPY services/control/package.json services/control/
COPY services/ingest/package.json services/ingest/
COPY services/fanout/package.json services/fanout/
COPY services/delivery/package.json services/delivery/
COPY services/audiences/package.json services/audiences/
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.base.json ./
COPY packages/platform/ packages/platform/
COPY services/ services/
RUN npx tsc -b services/setup services/control services/ingest services/fanout services/delivery services/audiences

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/platform/package.json packages/platform/
COPY packages/cli/package.json packages/cli/
COPY packages/analytics/package.json packages/analytics/
COPY services/setup/package.json services/setup/
COPY services/control/package.json services/control/
COPY services/ingest/package.json services/ingest/
COPY services/fanout/package.json services/fanout/
COPY services/delivery/package.json services/delivery/
COPY services/audiences/package.json services/audiences/
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0
WORKDIR /app
COPY --from=deps /app/package.json ./
COPY --from=deps /app/node_modules/ node_modules/
COPY --from=build /app/packages/platform/package.json packages/platform/
COPY --from=build /app/packages/platform/dist/ packages/platform/dist/
COPY --from=build /app/services/setup/package.json services/setup/
COPY --from=build /app/services/setup/dist/ services/setup/dist/
COPY --from=build /app/services/control/package.json services/control/
COPY --from=build /app/services/control/dist/ services/control/dist/
# The debugger page's static files (served by control from ../debugger relative to dist/).
COPY --from=build /app/services/control/debugger/ services/control/debugger/
COPY --from=build /app/services/ingest/package.json services/ingest/
COPY --from=build /app/services/ingest/dist/ services/ingest/dist/
COPY --from=build /app/services/fanout/package.json services/fanout/
COPY --from=build /app/services/fanout/dist/ services/fanout/dist/
COPY --from=build /app/services/delivery/package.json services/delivery/
COPY --from=build /app/services/delivery/dist/ services/delivery/dist/
COPY --from=build /app/services/audiences/package.json services/audiences/
COPY --from=build /app/services/audiences/dist/ services/audiences/dist/
COPY deploy/docker/start.mjs deploy/docker/
# The node user of the official image (uid/gid 1000), numeric so Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 8080 8081 8082 8083 8084
ENTRYPOINT ["node", "/app/deploy/docker/start.mjs"]
