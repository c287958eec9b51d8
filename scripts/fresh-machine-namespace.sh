#!/usr/bin/env bash
# Runs a command on this host as a machine without UCX and libfabric would: in a private mount and
# PID namespace where every file of the Debian/Ubuntu packages that install them (libucx0,
# libfabric1 and, where installed, libucx-dev, ucx-utils, libfabric-dev, libfabric-bin) does not
# exist. /usr is an overlay whose upper layer holds a whiteout for each of those files (and for each
# folder they alone fill, such as the UCX plugin folder), and the loader's cache is rebuilt without
# them, so a dlopen by soname or by full path, `ldconfig -p` and `ucx_info`/`fi_info` all find
# nothing, as after `apt-get purge`. Nothing outside the namespace changes: the overlay, its upper
# layer (a tmpfs), its own /dev/shm and every process the command started end with the command,
# since the kernel ends a PID namespace's processes and drops its mounts when its first process exits.
#
# Usage (as root):  scripts/fresh-machine-namespace.sh COMMAND [ARG...]
# Prints what it hid and checked on stderr, then runs COMMAND; exits with COMMAND's status, or 2
# when the namespace cannot be made or the files are still there. SIGTERM, SIGINT and SIGHUP reach
# COMMAND; whatever it leaves running ends with it.
set -euo pipefail

readonly PACKAGES=(libucx0 libucx-dev ucx-utils libfabric1 libfabric-dev libfabric-bin)
say() { echo "fresh-machine-namespace: $*" >&2; }
die() { say "$*"; exit 2; }
# The exit status of background child $1, into $status. A trapped signal interrupts `wait` (128 + n)
# while the child runs on: wait again. If the child ended while the handler ran, bash has reaped it
# already and keeps its status for one more `wait` (127 there means the status was reported).
wait_for() {
  local pid=$1 s again
  while :; do
    wait "$pid" && s=0 || s=$? # (errexit is on: a failing `wait` alone would end the script)
    ((s > 128)) && kill -0 "$pid" 2>/dev/null || break
  done
  if ((s > 128)); then
    wait "$pid" 2>/dev/null && again=0 || again=$?
    ((again == 127)) || s=$again
  fi
  status=$s
}

(($# > 0)) || die "usage: $0 COMMAND [ARG...]"

if [[ "${FRESH_MACHINE_NAMESPACE:-}" != inside ]]; then
  [[ $(id -u) == 0 ]] || die "needs root (a mount namespace and an overlay of /usr)"
  command -v unshare >/dev/null || die "needs unshare (util-linux)"
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
  grep -qw overlay /proc/filesystems || die "this kernel has no overlay filesystem"
  # The script continues as the namespace's first process (PID 1), whose end ends every process
  # the command left; --kill-child: it ends when unshare is killed too; --mount-proc: /proc shows
  # the namespace's processes only; --ipc: its own System V IPC, as a machine of its own has.
  # unshare blocks SIGTERM and SIGINT while it waits, so this shell passes them (and SIGHUP) to the
  # namespace's first process, which passes them to the command. Job control (-m): a background
  # job of a script would otherwise start with SIGINT ignored, for good.
  set -m
  FRESH_MACHINE_NAMESPACE=inside unshare --mount --propagation private --pid --kill-child --mount-proc --ipc bash "$0" "$@" &
  namespace=$!
  for signal in TERM INT HUP; do trap "pkill -$signal -P $namespace" "$signal"; done
  wait_for "$namespace"
  exit "$status"
fi

# --- inside the namespace ---
# Handlers first (PID 1 drops a signal it has none for): a signal during the set-up is kept, and
# the command is then not started; one after it has started is passed on to it.
child=
pending=
forward() { if [[ -n $child ]]; then kill -"$1" "$child" 2>/dev/null; else pending=$1; fi; }
trap 'forward TERM' TERM HUP
trap 'forward INT' INT
installed=()
for pkg in "${PACKAGES[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) == "install ok installed" ]] && installed+=("$pkg")
done

# The packages' files (not folders); a folder goes too when nothing else is left in it.
declare -A gone=()
dirs=()
if ((${#installed[@]} > 0)); then
  while IFS= read -r p; do
    [[ $p == /* ]] || continue # dpkg -L's blank lines and notes ("diverted by ...")
    [[ $p == /usr/* ]] || { [[ -d $p && ! -L $p ]] && continue; die "$p (of ${installed[*]}) is outside /usr: only /usr is overlaid"; }
    if [[ -d $p && ! -L $p ]]; then dirs+=("$p"); elif [[ -e $p || -L $p ]]; then gone[$p]=1; fi
  done < <(dpkg -L "${installed[@]}" | sort -u)
fi
# Deepest folders first, so a folder emptied by its subfolders goes too.
while IFS= read -r d; do
  [[ -n $d ]] || continue
  empty=1
  for entry in "$d"/* "$d"/.[!.]*; do
    [[ -e $entry || -L $entry ]] || continue
    [[ -n ${gone[$entry]:-} ]] || { empty=0; break; }
  done
  ((empty)) && gone[$d]=1
done < <(printf '%s\n' "${dirs[@]}" | awk -F/ '{ print NF "\t" $0 }' | sort -rn | cut -f2-)

scratch=$(mktemp -d /tmp/fresh-machine-namespace.XXXXXX)
cleanup_scratch() { umount -l "$scratch" 2>/dev/null || true; rmdir "$scratch" 2>/dev/null || true; }
trap cleanup_scratch EXIT
mount -t tmpfs -o mode=0755 fresh-machine "$scratch"
mkdir -p "$scratch/upper" "$scratch/work"
whiteouts=0
for p in "${!gone[@]}"; do
  [[ -n ${gone[${p%/*}]:-} ]] && continue # its folder is whited out already
  rel=${p#/usr/}
  mkdir -p "$scratch/upper/${rel%/*}"
  mknod "$scratch/upper/$rel" c 0 0 # an overlay whiteout: the path does not exist in the merged /usr
  whiteouts=$((whiteouts + 1))
done
mount -t overlay fresh-machine-usr -o "lowerdir=/usr,upperdir=$scratch/upper,workdir=$scratch/work" /usr
# The loader's cache, rebuilt from the merged /usr (-X: no links written), in place of /etc's.
ldconfig -X -C "$scratch/ld.so.cache"
mount --bind "$scratch/ld.so.cache" /etc/ld.so.cache
# Its own /dev/shm, of the host's size: POSIX shared memory named after process ids (the engine's
# segments are) must not meet the host's, whose process ids this namespace does not see (a sweep of
# segments whose owner is gone would take the other side's live ones for stale).
mount -t tmpfs -o "mode=1777,size=$(df --output=size -B1 /dev/shm | tail -1 | tr -d ' ')" fresh-machine-shm /dev/shm
# The mounts hold the tmpfs now; its folder on the host's /tmp is not needed any more.
cleanup_scratch
trap - EXIT

# The premise, checked: none of the files exists, the loader knows none of the libraries, no tool runs.
for p in "${!gone[@]}"; do
  [[ ! -e $p && ! -L $p ]] || die "$p still exists in the namespace"
done
if ldconfig -p | grep -E 'lib(ucp|uct|ucs|ucm|fabric)\.so' >&2; then die "the loader's cache still lists UCX or libfabric"; fi
for tool in ucx_info ucx_perftest fi_info fi_pingpong; do
  ! command -v "$tool" >/dev/null || die "$tool is still on PATH ($(command -v "$tool"))"
done
say "packages absent: ${installed[*]:-(none were installed)}; ${#gone[@]} files and folders gone (${whiteouts} whiteouts over /usr); no lib{ucp,uct,ucs,ucm,fabric} in the loader's cache; no ucx_info, fi_info; its own /dev/shm and PIDs"

# The command as a child, not exec'd: PID 1 ignores signals it has no handler for, so this shell
# passes them on and returns the command's status.
if [[ -n $pending ]]; then
  say "SIG$pending before the command started: not started"
  exit $((128 + $(kill -l "$pending")))
fi
set -m
"$@" &
child=$!
wait_for "$child"
exit "$status"
