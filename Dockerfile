# brisk in a container (docs/deploy.md). Two stages: `build` compiles the one binary with Debian's
# toolchain and the -dev packages scripts/setup installs for building; the runtime stage holds
# that binary, the shared libraries it links (readelf -d: libutf8proc, libcurl, libzmq) and
# nothing else.
# The web UI and the Qwen vocabulary are compiled into the binary, so no other file is copied.
#
#   docker build -t brisk .
#   docker run -p 8080:8080 -v "$PWD/models:/models:ro" brisk \
#     serve --host 0.0.0.0 -m /models/qwen2.5-0.5b-instruct-q4_k_m.gguf
#
# tests/deploy/deploy_test.mjs checks this file's invariants (ctest -L deploy).

FROM debian:bookworm-slim AS build
# Test-only packages of scripts/setup (gtest, gmock, chromium, node, ccache) are left out: the
# image builds without tests (-DBRISK_BUILD_TESTS=OFF).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ cmake ninja-build pkg-config \
      nlohmann-json3-dev libutf8proc-dev libcli11-dev libcurl4-openssl-dev libboost-dev libzmq3-dev \
      libjs-katex fonts-katex \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY cmake/ cmake/
COPY assets/ assets/
COPY web/ web/
COPY src/ src/
# Kernels are chosen at run time from CPUID, so the generic x86-64 build runs on any node.
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBRISK_BUILD_TESTS=OFF \
 && cmake --build build --target brisk \
 && strip build/src/brisk

FROM debian:bookworm-slim
# libutf8proc2, libcurl4 and libzmq5 are what the binary links beyond libc/libstdc++;
# ca-certificates for `brisk pull` over HTTPS; curl for the HEALTHCHECK.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libutf8proc2 libcurl4 libzmq5 ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*
# A fixed numeric uid: Kubernetes' runAsNonRoot can only verify a numeric USER.
RUN groupadd --system --gid 10001 brisk \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/brisk --create-home brisk \
 && mkdir -p /models \
 && chown brisk:brisk /models
COPY --from=build /src/build/src/brisk /usr/local/bin/brisk
# BRISK_HOME holds the default synthetic model (made on first use), bench reports and downloads.
ENV BRISK_HOME=/var/lib/brisk
VOLUME ["/models", "/var/lib/brisk"]
USER 10001:10001
EXPOSE 8080
# /health is 503 while the model loads: the start period covers loading a model from disk.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/health || exit 1
# Exec form: brisk is PID 1 and gets SIGTERM itself, which drains running requests (exit 0).
ENTRYPOINT ["brisk"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
