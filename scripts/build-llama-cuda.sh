#!/usr/bin/env bash
# Builds llama.cpp with CUDA (libllama.so, libggml*.so with the CUDA backend) from the source of the
# same llama.cpp release as the pinned prebuilt CPU package, for the llamacpp serving engine on a
# GPU (LLAMA_CPP_LIB_DIR=<prefix>/lib). The CUDA package of node-llama-cpp packs to 143 MB, too big
# to carry to a lent GPU machine; its source is 3.5 MB.
#
#   scripts/build-llama-cuda.sh --pack DIR   (here: npm, git, xz) write DIR/llama-src.tar.xz: the
#                                            llama.cpp release node-llama-cpp@3.21.1 ships as its
#                                            git bundle (the source @node-llama-cpp/linux-x64@3.21.1
#                                            is built from), the folders the libraries need
#   scripts/build-llama-cuda.sh TARBALL      (there: cmake, nvcc, g++) build it into the prefix,
#                                            idempotent; prints the LLAMA_CPP_LIB_DIR to use
#   scripts/build-llama-cuda.sh --prefix     print the prefix and exit
#
# Prefix: ${LLAMA_CUDA_PREFIX:-${XDG_CACHE_HOME:-~/.cache}/disagg-bench/llama-cuda-<release>};
# architectures: ${CUDA_ARCHS:-90} (H100/H200); jobs: ${LLAMA_BUILD_JOBS:-$(nproc)}; the build's
# log: <prefix>/build.log. FlashAttention kernels: ${LLAMA_CUDA_FA:-OFF}; their template instances
# are most of the build's time (a lent machine gives a call 10 minutes), and without them llama.cpp
# attends with its ordinary kernels.
set -euo pipefail

NLC_VERSION=3.21.1        # node-llama-cpp, the same release as @node-llama-cpp/linux-x64 in package.json
RELEASE=80fb11ac73e6      # the llama.cpp commit of its git bundle
PREFIX=${LLAMA_CUDA_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/disagg-bench/llama-cuda-$RELEASE}
say() { echo "build-llama-cuda: $*"; }

pack() {
  local dir=$1 work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  (cd "$work" && npm pack --silent "node-llama-cpp@$NLC_VERSION" >/dev/null)
  tar -xzf "$work"/node-llama-cpp-*.tgz -C "$work" package/llama/gitRelease.bundle
  git clone -q "$work/package/llama/gitRelease.bundle" "$work/src"
  local head
  head=$(git -C "$work/src" rev-parse HEAD)
  [[ $head == "$RELEASE"* ]] || { say "the bundle's commit is $head, not $RELEASE: update RELEASE"; exit 1; }
  mkdir -p "$dir"
  tar -C "$work/src" -cJf "$dir/llama-src.tar.xz" CMakeLists.txt cmake ggml src include common vendor licenses LICENSE
  say "wrote $dir/llama-src.tar.xz ($(du -h "$dir/llama-src.tar.xz" | cut -f1))"
}

build() {
  local tarball=$1
  if [[ -f $PREFIX/lib/.done ]]; then
    say "already built"
  else
    command -v cmake >/dev/null && { command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; } || { say "needs cmake and nvcc (CUDA)"; exit 1; }
    export PATH=$PATH:/usr/local/cuda/bin
    rm -rf "$PREFIX/src" "$PREFIX/build"
    mkdir -p "$PREFIX/src" "$PREFIX/lib"
    tar -C "$PREFIX/src" -xJf "$tarball"
    {
      cmake -S "$PREFIX/src" -B "$PREFIX/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
        -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DGGML_CUDA_FA="${LLAMA_CUDA_FA:-OFF}" -DGGML_NATIVE=ON \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
        -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF
      cmake --build "$PREFIX/build" -j "${LLAMA_BUILD_JOBS:-$(nproc)}" --target llama
    } >"$PREFIX/build.log" 2>&1 || { tail -30 "$PREFIX/build.log"; say "failed: $PREFIX/build.log"; exit 1; }
    find "$PREFIX/build" -name '*.so*' -exec cp -P {} "$PREFIX/lib/" \;
    touch "$PREFIX/lib/.done"
  fi
  say "built: LLAMA_CPP_LIB_DIR=$PREFIX/lib"
}

case ${1:-} in
  --prefix) echo "$PREFIX" ;;
  --pack) pack "${2:?--pack DIR}" ;;
  "" | -h | --help) sed -n '2,19p' "$0" ;;
  *) build "$1" ;;
esac
