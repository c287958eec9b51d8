#!/usr/bin/env bash
# The README's install and quick start on a machine without UCX and libfabric, for real: in a mount
# namespace where the files of libucx0, libfabric1 and their siblings do not exist
# (scripts/fresh-machine-namespace.sh), a fresh `git clone` of this checkout's HEAD, `npm ci` from
# the registry with an empty HOME (no npm cache, no ~/.cache), then
#   SCHEDULER=local npx disagg-bench run nixl
# with nothing else in the environment. It must end green with every config on ucx or libfabric
# skipped, naming libucx0 or libfabric1, in results.json, summary.json, summary.md and report.html
# (scripts/fresh-machine-check.mjs), and `disagg-bench list` must say the same. Afterwards nothing
# of the namespace is left (no mount, no process). Prints each step and check; exit 0 only when
# all hold, 1 when a check fails, 2 when the machine cannot run it.
#
# Usage (as root, with git, node and npm; the npm registry reachable):
#   scripts/fresh-machine.sh [--keep]     # --keep: keep the clone and its results (printed)
set -euo pipefail

say() { echo "fresh-machine: $*"; }
checkout=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [[ "${FRESH_MACHINE_STEP:-}" != inside ]]; then
  keep=0
  for arg in "$@"; do
    case $arg in
      --keep) keep=1 ;;
      -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
      *) echo "fresh-machine: unknown argument '$arg' (expected --keep)" >&2; exit 2 ;;
    esac
  done
  for tool in git node npm; do command -v "$tool" >/dev/null || { echo "fresh-machine: needs $tool on PATH" >&2; exit 2; }; done
  scratch=$(mktemp -d /tmp/fresh-machine.XXXXXX)
  say "host $(hostname), $(uname -sr), node $(node --version), npm $(npm --version), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  say "checkout $checkout at $(git -C "$checkout" rev-parse --short HEAD) ($(git -C "$checkout" rev-parse --abbrev-ref HEAD))"
  status=0
  # In its own process group (-m), each signal passed on once, by this shell: the run cancels.
  set -m
  FRESH_MACHINE_STEP=inside SCRATCH="$scratch" "$checkout/scripts/fresh-machine-namespace.sh" bash "$checkout/scripts/fresh-machine.sh" &
  namespace=$!
  for signal in TERM INT HUP; do trap "kill -$signal $namespace 2>/dev/null" "$signal"; done
  wait "$namespace" || status=$?
  while kill -0 "$namespace" 2>/dev/null; do wait "$namespace" || status=$?; done
  set +m
  # The namespace ended with its first process: its mounts and processes must be gone.
  if findmnt -rn -o TARGET,SOURCE | grep -E 'fresh-machine' >&2; then say "FAIL: a mount of the namespace outlived it"; status=1; else say "ok   no mount of the namespace is left (findmnt)"; fi
  left=$(find /proc/[0-9]*/cwd -maxdepth 0 -lname "$scratch*" 2>/dev/null | cut -d/ -f3 | tr '\n' ' ' || true)
  if [[ -n $left ]]; then say "FAIL: processes of the run outlived the namespace: $left"; status=1; else say "ok   no process of the run is left (none works in $scratch)"; fi
  if ((keep)); then say "kept: $scratch"; else rm -rf "$scratch"; fi
  if ((status == 0)); then say "PASSED: a machine without UCX and libfabric installs and runs the quick start green, the skipped configs naming their packages"; else say "FAILED (exit $status)"; fi
  exit "$status"
fi

# --- inside the namespace (scripts/fresh-machine-namespace.sh made it and checked the files are gone) ---
clone=$SCRATCH/disagg-bench
home=$SCRATCH/home
mkdir -p "$home"
# A login's environment on a fresh machine: nothing of this shell's (no XFER_LIB_*, GPU_TYPE, DISAGG_*).
fresh() { env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" LANG=C.UTF-8 TERM=dumb "$@"; }
fail() { say "FAIL $*"; exit 1; }

git clone --quiet --no-hardlinks "$checkout" "$clone"
cd "$clone"
say "step git clone: $(git log -1 --format='%h %s')"
started=$SECONDS
fresh npm ci --no-audit --no-fund >"$SCRATCH/npm-ci.log" 2>&1 || { tail -30 "$SCRATCH/npm-ci.log"; fail "npm ci (log above)"; }
say "step npm ci: $(grep -Eo 'added [0-9]+ packages' "$SCRATCH/npm-ci.log" || echo done) in $((SECONDS - started)) s, empty npm cache"

# The premise again, as the product sees it: its own koffi cannot load either library, by soname or path.
probe="const k=require('koffi');for(const n of ['libucp.so.0','libfabric.so.1','/usr/lib/x86_64-linux-gnu/libucp.so.0','/usr/lib/x86_64-linux-gnu/libfabric.so.1']){try{k.load(n);console.log(n+' LOADED')}catch{console.log(n+' cannot be loaded')}}"
loads=$(fresh node -e "$probe")
echo "$loads" | sed 's/^/fresh-machine: premise: /'
! grep -q LOADED <<<"$loads" || fail "a library still loads in the namespace"

started=$SECONDS
say "step SCHEDULER=local npx disagg-bench run nixl (the README's quick start):"
run_status=0
fresh SCHEDULER=local NO_COLOR=1 npx disagg-bench run nixl >"$SCRATCH/run.log" 2>&1 || run_status=$?
# The digest: from the run's digest heading to its end.
sed -n '/^disagg-bench run digest/,$p' "$SCRATCH/run.log" | grep -v '^npm notice' | sed 's/^/  | /'
say "step run: exit $run_status in $((SECONDS - started)) s"
((run_status == 0)) || { tail -40 "$SCRATCH/run.log"; fail "the quick start did not end green (exit $run_status)"; }

run_dir=$(readlink -f results/latest)
say "checks on $run_dir:"
checked=0
fresh node scripts/fresh-machine-check.mjs "$run_dir" test_configs/nixl >"$SCRATCH/checks.txt" || checked=$?
sed 's/^/fresh-machine: /' "$SCRATCH/checks.txt"
((checked == 0)) || fail "the run's files (above)"

# `list` says the same before a run, in the same words.
listing=$(fresh SCHEDULER=local npx disagg-bench list --type nixl 2>/dev/null)
for pkg in libucx0 libfabric1; do
  line=$(grep -P "^\S+\tSKIPPED: .*apt-get install $pkg\)" <<<"$listing" | cut -f1) || fail "disagg-bench list names no SKIPPED config with $pkg"
  say "ok   disagg-bench list: $line SKIPPED, naming $pkg"
done
