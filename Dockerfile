# runlog serve in a container:  docker build -t runlog .  &&  docker run -p 7070:7070 -e RUNLOG_TOKENS='[...]' runlog
# Stage 1 builds the package as `npm pack` ships it; stage 2 installs that tarball, and only its
# runtime dependencies, into a slim Node 20 image that runs as the unprivileged `node` user.
# test/deploy/compose.test.ts checks this file against the server's defaults.

FROM node:20-bookworm-slim AS build
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md LICENSE ./
COPY scripts ./scripts
COPY schemas ./schemas
COPY src ./src
COPY projections ./projections
# prepack runs the build (scripts/build.mjs).
RUN npm pack --pack-destination /tmp && mv /tmp/runlog-*.tgz /tmp/runlog.tgz

FROM node:20-bookworm-slim
ENV NODE_ENV=production
COPY --from=build /tmp/runlog.tgz /tmp/runlog.tgz
# The file log's writer lock runs sh and util-linux's flock(1): both are in the base image; fail the build if not.
RUN npm install --global --omit=dev --no-audit --no-fund /tmp/runlog.tgz \
  && rm /tmp/runlog.tgz && npm cache clean --force \
  && command -v flock \
  && mkdir -p /var/lib/runlog/data && chown -R node:node /var/lib/runlog
USER node
# The embedded file log's default directory is ./data: /var/lib/runlog/data, a volume.
# With Kafka (RUNLOG_KAFKA_BROKERS) it is not used.
WORKDIR /var/lib/runlog
VOLUME /var/lib/runlog/data
# Without tokens (RUNLOG_TOKENS or RUNLOG_TOKENS_FILE) the server listens on the container's
# loopback only, where this health check still reaches it, but a published port does not.
EXPOSE 7070
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.RUNLOG_PORT || 7070}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["runlog", "serve"]
