# Sourced by the local clusters' namespace helpers (slurm-local-netns.sh, gridengine-local-hosts.sh):
# whether a node of its own (network, mount and UTS namespaces) can be made on this host.

# Why namespaces cannot be made here, or nothing when they can (tried on a scratch namespace).
netns_unsupported() {
  command -v ip >/dev/null || { echo "no 'ip' command (install iproute2)"; return 0; }
  command -v unshare >/dev/null && command -v nsenter >/dev/null || { echo "no 'unshare'/'nsenter' commands (util-linux)"; return 0; }
  local probe="disagg-probe-$$" why
  why=$(ip netns add "$probe" 2>&1) || { echo "ip netns add failed: $why"; return 0; }
  why=$(nsenter --net="/run/netns/$probe" unshare --mount --uts --propagation private -- \
    sh -c 'mount -t tmpfs tmpfs /dev/shm && hostname disagg-probe' 2>&1) ||
    { ip netns del "$probe" 2>/dev/null; echo "a private mount/UTS namespace is refused: $why"; return 0; }
  ip netns del "$probe" 2>/dev/null
  return 1
}
