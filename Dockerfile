# A Berth worker for a Docker host: runs the shared-queue worker and this host's sandbox queue.
# The base is a build argument so an air-gapped site can point it at its mirror.
ARG NODE_IMAGE=node:20-bookworm-slim
FROM ${NODE_IMAGE}
WORKDIR /opt/berth
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm install --no-save tsx@4.23.15
COPY bin ./bin
COPY src ./src
ENV BERTH_HOME=/var/lib/berth
# The worker's Node flags (src/server/worker-daemon.ts, WORKER_NODE_FLAGS).
ENTRYPOINT ["node", "--max-semi-space-size=4", "bin/berth.mjs"]
CMD ["worker"]
