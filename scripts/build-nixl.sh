#!/usr/bin/env bash
# Builds NIXL (UCX backend; NIXL_PLUGINS=UCX,LIBFABRIC for libfabric too) and nixlbench from one pinned commit of ai-dynamo/nixl
# into a cache prefix outside the repository, with the dependencies Debian 12 lacks or has too
# old built from fetched sources:
#   - UCX: NIXL's UCX plugin uses UCP APIs newer than Debian's 1.13 (NIXL's CI builds v1.22.x);
#     with CUDA where /usr/local/cuda exists (cuda_copy, cuda_ipc, gdr-less);
#   - Abseil: Debian's 20220623 has no absl_log, which NIXL's meson requires (and it refuses to
#     mix a subproject Abseil with an old system one);
#   - etcd-cpp-apiv3: nixlbench's ETCD runtime (without it nixlbench has only its ASIO runtime);
#     built where Debian's gRPC, protobuf and cpprestsdk are installed;
#   - gflags (where no system one), asio headers, taskflow, tomlplusplus: meson's wraps would
#     download them, which cannot happen offline.
#
#   scripts/build-nixl.sh              build what is missing (idempotent: finished steps are skipped)
#   scripts/build-nixl.sh --prefix     print the prefix (built or not) and exit
#   scripts/build-nixl.sh --check      exit 0 and print nixlbench's path when built; else exit 1
#                                      with what is missing
#   scripts/build-nixl.sh --pack DIR   write the pinned sources as DIR/<owner>+<name>@<ref>.tar.xz
#                                      (UCX's with its configure generated), to carry them to a
#                                      machine without the mirror or autotools
#
# Sources: <SOURCES>/<owner>+<name>@<ref>.tar.xz when present, else bare git repositories laid out as
# <SOURCES>/<owner>+<name>/repo (the project's source mirror); SOURCES=${NIXL_SOURCES:-/work/.mirror}.
# Prefix: ${NIXL_PREFIX:-${XDG_CACHE_HOME:-~/.cache}/disagg-bench/nixl-<commit>}; nixlbench is
# <prefix>/bin/nixlbench, each step's log <prefix>/logs/<step>.log.
# Debian packages it needs: meson ninja-build cmake g++ make autoconf automake libtool pkg-config
# libfabric-dev libhwloc-dev pybind11-dev (NIXL builds its libfabric utilities whenever libfabric is
# found; its meson setup requires pybind11 for the Python bindings even when nothing uses them);
# libgflags-dev (else gflags is built); for the ETCD runtime also libgrpc++-dev
# libprotobuf-dev protobuf-compiler-grpc libcpprest-dev.
set -euo pipefail

NIXL_COMMIT=8770b655a6b17b5cdf7d2b56b6e0be5392496df5 # ai-dynamo/nixl main, 2026-08-21 (NIXL 1.4.0)
ABSEIL_REF=20250814.1                                 # what NIXL's abseil-cpp.wrap names
TASKFLOW_REF=v3.10.0                                  # NIXL's taskflow.wrap
TOMLPP_REF=v3.4.0                                     # NIXL's and nixlbench's tomlplusplus.wrap
ETCD_CPP_REF=v0.15.4
UCX_REF=v1.22.0                                       # NIXL's CI builds UCX v1.22.x
ASIO_REF=asio-1-30-2                                  # nixlbench's asio.wrap
GFLAGS_REF=v2.2.2

SOURCES=${NIXL_SOURCES:-/work/.mirror}
PREFIX=${NIXL_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/disagg-bench/nixl-${NIXL_COMMIT:0:12}}
JOBS=${NIXL_BUILD_JOBS:-$(nproc)}
NICE=${NIXL_BUILD_NICE:-19}

repo_of() { echo "$SOURCES/${1/\//+}/repo"; }
# Every source and the ref it is built at.
PINNED=("ai-dynamo/nixl $NIXL_COMMIT" "abseil/abseil-cpp $ABSEIL_REF" "taskflow/taskflow $TASKFLOW_REF"
  "marzer/tomlplusplus $TOMLPP_REF" "openucx/ucx $UCX_REF" "chriskohlhoff/asio $ASIO_REF"
  "gflags/gflags $GFLAGS_REF" "etcd-cpp-apiv3/etcd-cpp-apiv3 $ETCD_CPP_REF")
packed() { echo "$SOURCES/${1/\//+}@$2.tar.xz"; }
# The part of a repository the build uses, where that is not all of it (taskflow's is 48 MB packed).
part_of() { case $1 in taskflow/taskflow) echo taskflow ;; chriskohlhoff/asio) echo asio/include ;; esac; }
have_source() { [[ -f $(packed "$1" "$2") ]] || git --git-dir="$(repo_of "$1")" rev-parse -q --verify "$2^{commit}" >/dev/null 2>&1; }
say() { echo "build-nixl: $*"; }

missing() {
  local out=()
  local tools=(meson ninja cmake g++ make pkg-config)
  # autotools only to generate UCX's configure, which a packed UCX source already carries
  [[ -f $(packed openucx/ucx "$UCX_REF") ]] || tools+=(autoreconf libtoolize)
  for tool in "${tools[@]}"; do command -v "$tool" >/dev/null || out+=("program $tool"); done
  local pinned
  for pinned in "${PINNED[@]:0:6}"; do
    # shellcheck disable=SC2086
    have_source $pinned || out+=("source ${pinned/ / at } ($(packed $pinned) or $(repo_of ${pinned% *}))")
  done
  [[ ${#out[@]} -eq 0 ]] || printf '%s\n' "${out[@]}"
}

case "${1:-}" in
  --prefix) echo "$PREFIX"; exit 0 ;;
  --pack)
    [[ -n ${2:-} ]] || { echo "usage: scripts/build-nixl.sh --pack DIR" >&2; exit 2; }
    mkdir -p "$2"
    for pinned in "${PINNED[@]}"; do
      read -r repo ref <<<"$pinned"
      out="$(cd "$2" && pwd)/${repo/\//+}@$ref.tar.xz"
      [[ -f $out ]] && continue
      tmp=$(mktemp -d)
      # shellcheck disable=SC2046
      git --git-dir="$(repo_of "$repo")" archive "$ref" $(part_of "$repo") | tar -x -C "$tmp"
      [[ $repo == openucx/ucx ]] && (cd "$tmp" && ./autogen.sh >/dev/null)
      tar -C "$tmp" -c . | xz -T2 -6 >"$out.part" && mv "$out.part" "$out" && echo "$out"
      rm -rf "$tmp"
    done
    exit 0 ;;
  --check)
    if [[ -x $PREFIX/bin/nixlbench ]]; then echo "$PREFIX/bin/nixlbench"; exit 0; fi
    echo "nixlbench is not built: $PREFIX/bin/nixlbench is missing (run scripts/build-nixl.sh)"
    missing | sed 's/^/  needs: /'
    exit 1 ;;
  "") ;;
  *) echo "usage: scripts/build-nixl.sh [--prefix | --check | --pack DIR]" >&2; exit 2 ;;
esac

needs=$(missing)
if [[ -n $needs ]]; then
  say "cannot build: missing"
  echo "$needs" | sed 's/^/  /'
  exit 3
fi

mkdir -p "$PREFIX/logs" "$PREFIX/src"
# Abseil and the etcd client get prefixes of their own: the etcd client is built on Debian's gRPC,
# which uses Debian's old Abseil, so the new Abseil's headers must never be on its include path
# (nor on nixlbench's, which includes the etcd client's headers). Their sonames and inline
# namespaces differ, so both Abseils load side by side in nixlbench.
ABSL=$PREFIX/absl ETCD=$PREFIX/etcd UCX=$PREFIX/ucx
RPATH="-Wl,-rpath,$PREFIX/lib,-rpath,$ABSL/lib,-rpath,$ETCD/lib,-rpath,$UCX/lib"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig:$ABSL/lib/pkgconfig:$UCX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
say "prefix $PREFIX, $JOBS jobs at nice $NICE, sources from $SOURCES"

# A tree of <repo> at <ref> under $PREFIX/src/<dir> (once).
tree() {
  local repo=$1 ref=$2 dir=$PREFIX/src/$3
  if [[ ! -d $dir ]]; then
    rm -rf "$dir.part" && mkdir -p "$dir.part"
    if [[ -f $(packed "$repo" "$ref") ]]; then
      xz -dc "$(packed "$repo" "$ref")" | tar -x -C "$dir.part"
    else
      # shellcheck disable=SC2046
      git --git-dir="$(repo_of "$repo")" archive "$ref" $(part_of "$repo") | tar -x -C "$dir.part"
    fi
    mv "$dir.part" "$dir"
  fi
  echo "$dir"
}

# Runs one step once: its output to logs/<name>.log, a stamp when it finished.
step() {
  local name=$1; shift
  if [[ -f $PREFIX/logs/$name.done ]]; then say "$name: done before"; return 0; fi
  say "$name: building (log $PREFIX/logs/$name.log)"
  local t0=$SECONDS
  # In the background, so that set -e holds inside the step (an `if` around it would switch it off).
  ("$@") >"$PREFIX/logs/$name.log" 2>&1 &
  if ! wait $!; then
    say "$name FAILED after $((SECONDS - t0)) s; the end of its log:"
    tail -n 30 "$PREFIX/logs/$name.log" | sed 's/^/  /'
    exit 1
  fi
  touch "$PREFIX/logs/$name.done"
  say "$name: done in $((SECONDS - t0)) s"
}

# CUDA where there is a toolkit AND a driver: a toolkit alone (this CPU machine has one) fails
# UCX's configure, and nixlbench linked to libcuda would not start without the driver.
has_cuda() { [[ -x $CUDA_HOME/bin/nvcc ]] && ldconfig -p | grep -q 'libcuda\.so\.1'; }
# meson's CUDA lookup and nixlbench's fallback both read these: pointing them nowhere builds without.
without_cuda() { if has_cuda; then "$@"; else CUDA_PATH=/var/empty CUDA_HOME=/var/empty "$@"; fi; }

build_ucx() {
  local src; src=$(tree openucx/ucx "$UCX_REF" ucx)
  local cuda=(--without-cuda)
  # GDA-KI (mlx5 GPU-initiated verbs) needs DOCA GPUNetIO headers from a git submodule that a source
  # archive does not carry, and nixlbench does not use it
  has_cuda && cuda=(--with-cuda="$CUDA_HOME" --with-nvcc-gencode="-gencode=arch=compute_90,code=sm_90" --without-gda)
  cd "$src"
  [[ -x configure ]] || nice -n "$NICE" ./autogen.sh
  mkdir -p "$PREFIX/build/ucx" && cd "$PREFIX/build/ucx"
  [[ -f config.status && Makefile -nt config.status ]] ||
    nice -n "$NICE" "$src/contrib/configure-release-mt" --prefix="$UCX" --enable-shared --disable-static \
      --disable-doxygen-doc --enable-cma --enable-devel-headers --without-java --without-go --without-gdrcopy \
      "${cuda[@]}"
  # The libraries and their transport modules; UCX's tools only for ucx_info (the GPU run's record).
  local dir
  for dir in src/ucm src/ucs src/uct src/ucp; do
    nice -n "$NICE" make -C "$dir" -j "$JOBS" install
  done
  nice -n "$NICE" make -C src/tools/info -j "$JOBS" install
  nice -n "$NICE" make install-pkgconfigDATA || true # ucx.pc (not needed: NIXL is given -Ducx_path)
}

# Header-only; meson's dependency('asio') wants a pkg-config file.
build_asio() {
  local src; src=$(tree chriskohlhoff/asio "$ASIO_REF" asio)
  mkdir -p "$PREFIX/include" "$PREFIX/lib/pkgconfig"
  cp -r "$src/asio/include/asio" "$src/asio/include/asio.hpp" "$PREFIX/include/"
  printf 'prefix=%s\nName: asio\nDescription: Asio (headers)\nVersion: 1.30.2\nCflags: -I${prefix}/include\n' "$PREFIX" >"$PREFIX/lib/pkgconfig/asio.pc"
}

build_gflags() {
  local src; src=$(tree gflags/gflags "$GFLAGS_REF" gflags)
  nice -n "$NICE" cmake -S "$src" -B "$PREFIX/build/gflags" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF \
    -DCMAKE_INSTALL_RPATH="$PREFIX/lib" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 # gflags 2.2.2 asks for CMake 2.8, which CMake 4 refuses
  nice -n "$NICE" ninja -C "$PREFIX/build/gflags" -j "$JOBS" install
}

build_abseil() {
  local src; src=$(tree abseil/abseil-cpp "$ABSEIL_REF" abseil-cpp)
  nice -n "$NICE" cmake -S "$src" -B "$PREFIX/build/abseil" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$ABSL" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=ON \
    -DCMAKE_CXX_STANDARD=17 -DABSL_PROPAGATE_CXX_STD=ON -DABSL_BUILD_TESTING=OFF \
    -DCMAKE_INSTALL_RPATH="$ABSL/lib"
  nice -n "$NICE" ninja -C "$PREFIX/build/abseil" -j "$JOBS" install
}

# nixlbench's ETCD runtime: the etcd v3 C++ client (gRPC, protobuf, cpprestsdk from Debian).
build_etcd_cpp() {
  local src; src=$(tree etcd-cpp-apiv3/etcd-cpp-apiv3 "$ETCD_CPP_REF" etcd-cpp-apiv3)
  nice -n "$NICE" cmake -S "$src" -B "$PREFIX/build/etcd-cpp-apiv3" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$ETCD" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_ETCD_TESTS=OFF \
    -DBUILD_ETCD_CORE_ONLY=OFF -DETCD_W_STRICT=OFF -DCMAKE_INSTALL_RPATH="$ETCD/lib"
  nice -n "$NICE" ninja -C "$PREFIX/build/etcd-cpp-apiv3" -j "$JOBS" install
}

# The meson subprojects a wrap would download, placed where meson looks for them.
subprojects() {
  local into=$1
  mkdir -p "$into"
  if [[ -f $into/taskflow.wrap ]]; then # NIXL's, not nixlbench's
    [[ -d $into/taskflow-3.10.0 ]] || cp -r "$(tree taskflow/taskflow "$TASKFLOW_REF" taskflow)" "$into/taskflow-3.10.0"
    [[ -f $into/taskflow-3.10.0/meson.build ]] || cp "$into/packagefiles/taskflow/meson.build" "$into/taskflow-3.10.0/"
  fi
  [[ -d $into/tomlplusplus-3.4.0 ]] || cp -r "$(tree marzer/tomlplusplus "$TOMLPP_REF" tomlplusplus)" "$into/tomlplusplus-3.4.0"
}

build_nixl() {
  local src; src=$(tree ai-dynamo/nixl "$NIXL_COMMIT" nixl)
  subprojects "$src/subprojects"
  # NIXL's own etcd metadata exchange is left out (nixlbench exchanges metadata through its runtime):
  # NIXL compiles against the new Abseil, the etcd client's headers against Debian's.
  # NIXL_PLUGINS=UCX,LIBFABRIC adds the libfabric backend (Debian's libfabric-dev 1.17)
  local plugins=${NIXL_PLUGINS:-UCX}
  # NIXL builds its Python meta-wheel with uv whenever uv is on PATH, and uv fetches setuptools from
  # the network; nixlbench needs no wheel, so that lookup is made to find nothing (the only edit to
  # NIXL's sources: packaging, not anything nixlbench runs)
  sed -i "s/find_program('uv', required: false)/find_program('uv-not-used-by-nixlbench', required: false)/" \
    "$src/src/bindings/python/nixl-meta/meson.build"
  # configured once (a rerun after a failed compile resumes instead of starting over)
  [[ -f $PREFIX/build/nixl/build.ninja ]] ||
    without_cuda nice -n "$NICE" meson setup "$PREFIX/build/nixl" "$src" --wrap-mode=nodownload --prefix="$PREFIX" \
    --libdir=lib -Dbuildtype=release -Dwerror=false -Denable_plugins="$plugins" -Dbuild_tests=false \
    -Dbuild_examples=false -Dinstall_headers=true -Dwith_trace=false -Ducx_path="$UCX" \
    -Dnixl_cuda_arch_list=90 -Dcpp_link_args="$RPATH"
  nice -n "$NICE" ninja -C "$PREFIX/build/nixl" -j "$JOBS" install
}

build_nixlbench() {
  local src=$PREFIX/src/nixl/benchmark/nixlbench
  subprojects "$src/subprojects"
  rm -rf "$PREFIX/build/nixlbench" # from scratch: whether the etcd client is there is decided at setup
  # the etcd client when it is built (its CMake package omits its include dir, hence cpp_args);
  # without it nixlbench has its ASIO runtime only (meson refuses an include dir that is not there)
  # with CUDA, nvcc links nixlbench and does not pass cpp_link_args' rpaths: ld then finds the NIXL
  # libraries' own dependencies (Abseil, UCX) through LD_LIBRARY_PATH
  export LD_LIBRARY_PATH="$PREFIX/lib:$ABSL/lib:$UCX/lib:$ETCD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local etcd=()
  [[ -d $ETCD/include ]] && etcd=(-Detcd_inc_path="$ETCD/include" -Detcd_lib_path="$ETCD/lib" -Dcmake_prefix_path="$ETCD" -Dcpp_args="-I$ETCD/include")
  without_cuda nice -n "$NICE" meson setup "$PREFIX/build/nixlbench" "$src" --wrap-mode=nodownload --prefix="$PREFIX" \
    --libdir=lib -Dbuildtype=release -Dwerror=false -Dnixl_path="$PREFIX" -Ducx_path="$UCX" \
    -Ducx_device_cuda_arch_list=90 "${etcd[@]}" -Dcpp_link_args="$RPATH"
  nice -n "$NICE" ninja -C "$PREFIX/build/nixlbench" -j "$JOBS" install
  # meson's install keeps no rpath for NIXL's libraries' own dependencies (Abseil, UCX): bin/nixlbench
  # is a wrapper that names the prefix's library folders, the binary beside it
  mv "$PREFIX/bin/nixlbench" "$PREFIX/bin/nixlbench.bin"
  printf '#!/bin/sh\n# nixlbench built by disagg-bench scripts/build-nixl.sh, with its libraries\nexport LD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\nexec "%s" "$@"\n' \
    "$PREFIX/lib:$ABSL/lib:$UCX/lib:$ETCD/lib" "$PREFIX/bin/nixlbench.bin" >"$PREFIX/bin/nixlbench"
  chmod +x "$PREFIX/bin/nixlbench"
  # built with the etcd client already there: that is the ETCD build too
  if grep -q 'HAVE_ETCD 1' "$PREFIX/build/nixlbench/config.h"; then touch "$PREFIX/logs/nixlbench-etcd.done"; fi
}

step abseil build_abseil
step ucx build_ucx
step asio build_asio
if pkg-config --exists gflags; then say "gflags: the system's"; else step gflags build_gflags; fi
step nixl build_nixl
# nixlbench first with what is there (its ASIO runtime at least), then again with its ETCD runtime
# once the etcd client is built: the longest step comes after a nixlbench that runs.
step nixlbench build_nixlbench
if pkg-config --exists grpc++ protobuf && command -v grpc_cpp_plugin >/dev/null && [[ -d /usr/include/cpprest ]] &&
  have_source etcd-cpp-apiv3/etcd-cpp-apiv3 "$ETCD_CPP_REF"; then
  step etcd-cpp-apiv3 build_etcd_cpp
  step nixlbench-etcd build_nixlbench
else
  say "etcd-cpp-apiv3: skipped (needs libgrpc++-dev, protobuf-compiler-grpc, libcpprest-dev and the etcd-cpp-apiv3/etcd-cpp-apiv3 source): nixlbench has only its ASIO runtime"
fi
runtimes=ASIO
[[ -f $PREFIX/logs/nixlbench-etcd.done ]] && runtimes="ETCD, ASIO"
say "nixlbench ($runtimes runtimes): $PREFIX/bin/nixlbench"
say "NIXL plugins: $PREFIX/lib/plugins"
