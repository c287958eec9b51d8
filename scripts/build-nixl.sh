#!/usr/bin/env bash
# Builds NIXL (UCX and libfabric backends, Python bindings where pybind11 is present) and
# nixlbench from one pinned commit of ai-dynamo/nixl into a cache prefix outside the repository,
# with the dependencies Debian 12 lacks built from fetched sources:
#   - Abseil: Debian's 20220623 has no absl_log, which NIXL's meson requires (and it refuses to
#     mix a subproject Abseil with an old system one);
#   - etcd-cpp-apiv3: nixlbench's ETCD runtime (without it nixlbench has only its ASIO runtime);
#   - taskflow, tomlplusplus: meson subprojects, which cannot download their wraps offline.
#
#   scripts/build-nixl.sh            build what is missing (idempotent: finished steps are skipped)
#   scripts/build-nixl.sh --prefix   print the prefix (build or not) and exit
#   scripts/build-nixl.sh --check    exit 0 when nixlbench is built, 1 when not; prints what is missing
#
# Sources: bare git repositories laid out as <SOURCES>/<owner>+<name>/repo (the layout the
# project's source mirror uses), SOURCES=${NIXL_SOURCES:-/work/.mirror}.
# Prefix: ${NIXL_PREFIX:-${XDG_CACHE_HOME:-~/.cache}/disagg-bench/nixl-<commit>}; nixlbench is
# <prefix>/bin/nixlbench, every step's log <prefix>/logs/<step>.log.
# Debian packages it needs: meson ninja-build cmake g++ pkg-config libucx-dev libfabric-dev
# libgflags-dev libasio-dev; for the ETCD runtime also libgrpc++-dev libprotobuf-dev
# protobuf-compiler-grpc libcpprest-dev; for the Python bindings pybind11-dev python3-dev.
set -euo pipefail

NIXL_COMMIT=8770b655a6b17b5cdf7d2b56b6e0be5392496df5 # ai-dynamo/nixl main, 2026-08-21 (NIXL 1.4.0)
ABSEIL_REF=20250814.1                                 # what NIXL's abseil-cpp.wrap names
TASKFLOW_REF=v3.10.0                                  # NIXL's taskflow.wrap
TOMLPP_REF=v3.4.0                                     # NIXL's and nixlbench's tomlplusplus.wrap
ETCD_CPP_REF=v0.15.4

SOURCES=${NIXL_SOURCES:-/work/.mirror}
PREFIX=${NIXL_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/disagg-bench/nixl-${NIXL_COMMIT:0:12}}
JOBS=${NIXL_BUILD_JOBS:-$(nproc)}
NICE=${NIXL_BUILD_NICE:-19}

repo_of() { echo "$SOURCES/${1/\//+}/repo"; }
say() { echo "build-nixl: $*"; }

missing() {
  local out=()
  for tool in meson ninja cmake g++ pkg-config git; do command -v "$tool" >/dev/null || out+=("program $tool"); done
  for pc in ucx gflags libfabric; do pkg-config --exists "$pc" 2>/dev/null || out+=("pkg-config module $pc (Debian: libucx-dev / libgflags-dev / libfabric-dev)"); done
  [[ -f /usr/include/asio.hpp ]] || out+=("/usr/include/asio.hpp (Debian: libasio-dev)")
  for r in ai-dynamo/nixl abseil/abseil-cpp taskflow/taskflow marzer/tomlplusplus; do
    git --git-dir="$(repo_of $r)" rev-parse -q --verify "HEAD^{commit}" >/dev/null 2>&1 || out+=("source $r at $(repo_of $r)")
  done
  [[ ${#out[@]} -eq 0 ]] || printf '%s\n' "${out[@]}"
}

case "${1:-}" in
  --prefix) echo "$PREFIX"; exit 0 ;;
  --check)
    if [[ -x $PREFIX/bin/nixlbench ]]; then echo "$PREFIX/bin/nixlbench"; exit 0; fi
    echo "nixlbench is not built: $PREFIX/bin/nixlbench is missing (run scripts/build-nixl.sh)"
    missing | sed 's/^/  needs: /'
    exit 1 ;;
  "") ;;
  *) echo "usage: scripts/build-nixl.sh [--prefix | --check]" >&2; exit 2 ;;
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
ABSL=$PREFIX/absl ETCD=$PREFIX/etcd
RPATH="-Wl,-rpath,$PREFIX/lib,-rpath,$ABSL/lib,-rpath,$ETCD/lib"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig:$ABSL/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
say "prefix $PREFIX, $JOBS jobs at nice $NICE, sources from $SOURCES"

# A tree of <repo> at <ref> under $PREFIX/src/<dir> (once).
tree() {
  local repo=$1 ref=$2 dir=$PREFIX/src/$3
  if [[ ! -d $dir ]]; then
    mkdir -p "$dir.part"
    git --git-dir="$(repo_of "$repo")" archive "$ref" | tar -x -C "$dir.part"
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
  if ! ("$@") >"$PREFIX/logs/$name.log" 2>&1; then
    say "$name FAILED after $((SECONDS - t0)) s; the end of its log:"
    tail -n 30 "$PREFIX/logs/$name.log" | sed 's/^/  /'
    exit 1
  fi
  touch "$PREFIX/logs/$name.done"
  say "$name: done in $((SECONDS - t0)) s"
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
  [[ -d $into/taskflow-3.10.0 ]] || cp -r "$(tree taskflow/taskflow "$TASKFLOW_REF" taskflow)" "$into/taskflow-3.10.0"
  [[ -f $into/taskflow-3.10.0/meson.build ]] || cp "$into/packagefiles/taskflow/meson.build" "$into/taskflow-3.10.0/"
  [[ -d $into/tomlplusplus-3.4.0 ]] || cp -r "$(tree marzer/tomlplusplus "$TOMLPP_REF" tomlplusplus)" "$into/tomlplusplus-3.4.0"
}

build_nixl() {
  local src; src=$(tree ai-dynamo/nixl "$NIXL_COMMIT" nixl)
  subprojects "$src/subprojects"
  # NIXL's own etcd metadata exchange is left out (nixlbench exchanges metadata through its runtime):
  # NIXL compiles against the new Abseil, the etcd client's headers against Debian's.
  nice -n "$NICE" meson setup "$PREFIX/build/nixl" "$src" --wipe --wrap-mode=nodownload --prefix="$PREFIX" \
    --libdir=lib -Dbuildtype=release -Dwerror=false -Denable_plugins=UCX,LIBFABRIC -Dbuild_tests=false \
    -Dbuild_examples=false -Dinstall_headers=true -Dwith_trace=false -Dcpp_link_args="$RPATH"
  nice -n "$NICE" ninja -C "$PREFIX/build/nixl" -j "$JOBS" install
}

build_nixlbench() {
  local src=$PREFIX/src/nixl/benchmark/nixlbench
  subprojects "$src/subprojects"
  # Debian's libasio-dev is header-only and ships no pkg-config file; meson's dependency('asio') needs one.
  mkdir -p "$PREFIX/lib/pkgconfig"
  printf 'Name: asio\nDescription: Asio (Debian libasio-dev headers)\nVersion: 1.22.1\nCflags: -I/usr/include\n' >"$PREFIX/lib/pkgconfig/asio.pc"
  nice -n "$NICE" meson setup "$PREFIX/build/nixlbench" "$src" --wipe --wrap-mode=nodownload --prefix="$PREFIX" \
    --libdir=lib -Dbuildtype=release -Dwerror=false -Dnixl_path="$PREFIX" \
    -Detcd_inc_path="$ETCD/include" -Detcd_lib_path="$ETCD/lib" -Dcmake_prefix_path="$ETCD" \
    -Dcpp_link_args="$RPATH"
  nice -n "$NICE" ninja -C "$PREFIX/build/nixlbench" -j "$JOBS" install
}

step abseil build_abseil
if pkg-config --exists grpc++ protobuf && command -v grpc_cpp_plugin >/dev/null && [[ -d /usr/include/cpprest ]] &&
  git --git-dir="$(repo_of etcd-cpp-apiv3/etcd-cpp-apiv3)" rev-parse -q --verify "$ETCD_CPP_REF^{commit}" >/dev/null 2>&1; then
  step etcd-cpp-apiv3 build_etcd_cpp
else
  say "etcd-cpp-apiv3: skipped (needs libgrpc++-dev, protobuf-compiler-grpc, libcpprest-dev and the etcd-cpp-apiv3/etcd-cpp-apiv3 source): nixlbench gets only its ASIO runtime"
fi
step nixl build_nixl
step nixlbench build_nixlbench
say "nixlbench: $PREFIX/bin/nixlbench"
say "NIXL plugins: $PREFIX/lib/plugins"
