# Switchboard server image with onnxruntime's CUDA execution provider (and WebGPU over the NVIDIA
# Vulkan driver), for a machine with an NVIDIA GPU. Build it on a machine with internet:
#
#   docker build -f docker/cuda.Dockerfile -t switchboard:cuda .
#   docker run --gpus all -e INFERENCE_DEVICE=auto -p 3000:3000 switchboard:cuda
#
# Not built in this repository's CI (no Docker engine, no internet there). It differs from
# docker/Dockerfile in two places only: the CUDA provider libraries are fetched at build time (from
# NuGet, by onnxruntime-node's own installer), and the runtime stage is NVIDIA's CUDA 12 + cuDNN 9
# image, which those libraries link against. test/integration/deployment/docker-files.spec.ts keeps
# the rest the same as the CPU image.
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund
# Run the installer explicitly: newer npm releases may hold back dependencies' install scripts, and
# a silent skip would give an image that falls back to CPU. The test fails the build instead.
RUN cd node_modules/onnxruntime-node \
 && ONNXRUNTIME_NODE_INSTALL=cuda12 node script/install \
 && test -f bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so
COPY tsconfig.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build && npm prune --omit=dev

FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04
WORKDIR /app
# Node from the official image (same version as the build stage); libvulkan1 is the Vulkan loader
# that onnxruntime's WebGPU provider (Dawn) opens; the NVIDIA container toolkit mounts the driver's
# Vulkan ICD when "graphics" is among the driver capabilities.
COPY --from=build /usr/local/bin/node /usr/local/bin/node
RUN apt-get update \
 && apt-get install -y --no-install-recommends libvulkan1 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data \
    INFERENCE_DEVICE=auto \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics
RUN useradd --system --uid 10001 switchboard && mkdir -p /data && chown switchboard /data
COPY --from=build /app/package.json /app/prisma.config.ts ./
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER switchboard
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# What `npm start` runs; SIGTERM reaches node directly and starts its drain.
CMD ["node", "dist/apps/server/apps/server/src/main.js"]
