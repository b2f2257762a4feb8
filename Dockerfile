# syntax=docker/dockerfile:1
# The regional pool's image (docs/deploy.md). Two targets:
#   docker build -t REGISTRY/edgecascade/regional:TAG .                    # cpu (the default, last stage)
#   docker build --target gpu -t REGISTRY/edgecascade/regional:TAG-gpu .   # onnxruntime-node's CUDA 12 provider
# test/deploy/image.test.ts runs this file's install and start steps (its RUN, COPY, USER and ENTRYPOINT
# lines, parsed from here) in a temporary directory, so the recipe cannot rot unnoticed.
ARG NODE_IMAGE=node:24-bookworm-slim
# CUDA 12 and cuDNN 9: what onnxruntime-node 1.30's CUDA provider links against.
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04

FROM ${NODE_IMAGE} AS node

# Production dependencies only. .npmrc skips onnxruntime-node's CUDA download (its CPU binaries ship in the
# package); the other platforms' binaries and onnxruntime-web (bundled into the Worker, never loaded by the
# pool) are dropped: together over half the size of node_modules.
FROM node AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
RUN find node_modules/onnxruntime-node/bin/napi-v6 -mindepth 1 -maxdepth 2 ! -path "*/napi-v6/linux" ! -path "*/linux/$(node -p process.arch)" -exec rm -rf {} + && rm -rf node_modules/onnxruntime-web

# The same with the CUDA 12 provider: ONNXRUNTIME_NODE_INSTALL overrides .npmrc, and onnxruntime-node's
# install script downloads the provider (from NuGet: this stage needs that network access).
FROM node AS deps-gpu
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN ONNXRUNTIME_NODE_INSTALL=cuda12 npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
RUN test -f node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so
RUN find node_modules/onnxruntime-node/bin/napi-v6 -mindepth 1 -maxdepth 2 ! -path "*/napi-v6/linux" ! -path "*/linux/$(node -p process.arch)" -exec rm -rf {} + && rm -rf node_modules/onnxruntime-web

# What the pool runs: its code, the protocol it shares with the edge, and the model repository. Every model
# file's sha256 is in its config.json and is checked before the file is loaded.
FROM scratch AS app
COPY package.json /app/
COPY protocol /app/protocol
COPY regional /app/regional
COPY models /app/models

FROM ${CUDA_IMAGE} AS gpu
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
COPY --from=node /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=deps-gpu /app/node_modules ./node_modules
COPY --from=app /app ./
ENV NODE_ENV=production
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# HTTP, and the Open Inference Protocol's gRPC service (--grpc-port).
EXPOSE 8000 8001
ENTRYPOINT ["/usr/bin/tini", "--", "node", "regional/main.ts"]
# Exit rather than serve slowly on the CPU when CUDA does not load.
CMD ["--ep", "cuda"]

FROM node AS cpu
# tini as PID 1: it forwards SIGTERM/SIGINT/SIGHUP to Node and reaps orphans. Node as PID 1 would get no
# default signal actions, so a SIGTERM arriving before main.ts installs its handlers (while onnxruntime loads)
# would be ignored until the kubelet's SIGKILL.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=app /app ./
ENV NODE_ENV=production
USER 1000:1000
# HTTP, and the Open Inference Protocol's gRPC service (--grpc-port).
EXPOSE 8000 8001
ENTRYPOINT ["/usr/bin/tini", "--", "node", "regional/main.ts"]
