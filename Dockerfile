# A Berth worker for a Docker host: runs the shared-queue worker and this host's sandbox queue.
# The base is a build argument so an air-gapped site can point it at its mirror.
ARG NODE_IMAGE=node:20-bookworm-slim

# The dependencies, installed in a stage of their own so the npm cache never reaches the image.
FROM ${NODE_IMAGE} AS dependencies
WORKDIR /opt/berth
# A site without a registry puts an npm cache beside the Dockerfile as npm-cache/ (from `npm ci --cache npm-cache`
# on a connected machine): its contents land here and the install needs no registry. Without one, npm fetches.
COPY package.json package-lock.json npm-cache* ./
# tsx (which runs the TypeScript sources) is a runtime dependency.
RUN npm ci --omit=dev --no-audit --no-fund --prefer-offline --cache /opt/berth

FROM ${NODE_IMAGE}
WORKDIR /opt/berth
COPY package.json package-lock.json ./
COPY --from=dependencies /opt/berth/node_modules ./node_modules
COPY bin ./bin
COPY src ./src
ENV BERTH_HOME=/var/lib/berth
# The worker's Node flags (src/server/worker-daemon.ts, WORKER_NODE_FLAGS).
ENTRYPOINT ["node", "--max-semi-space-size=4", "bin/berth.mjs"]
CMD ["worker"]
