# Sourced by slurm-local.sh when DISAGG_SLURM_NETNS=1: a cluster whose nodes are apart. Each
# slurmd runs in its own network namespace (a veth pair on a bridge, one address per node, named
# eth0 inside), its own UTS namespace (hostname = node name) and a private mount namespace with
# its own /dev/shm (a fresh tmpfs) and /etc/hosts (the nodes' names and addresses). Jobs inherit
# them, so ranks on two nodes can only meet over the network: no shared memory, no loopback.
# The nodes still share the host's IPC and PID namespaces: UCX left to choose finds System V
# shared memory / CMA between them (ucx_perftest 15.9 GB/s at 64 MiB), so measurements of the link
# set UCX_TLS=tcp (bench/netns-link.ts). The engine's ucx backend gives a peer on another node
# peer error handling, which in UCX 1.13 leaves only tcp (with --ucx-error-handling none it may not).
# slurmctld stays in the host's namespaces and reaches the nodes through the bridge's address.
#
# Settings: DISAGG_SLURM_SUBNET (first three octets of the /24, default 10.213.7: the bridge is
# .1, node i is .(10+i)), DISAGG_SLURM_NODE_PREFIX (node names, default n). Names of the bridge,
# namespaces and host-side veths carry the third octet, so clusters on other subnets never meet.

SUBNET="${DISAGG_SLURM_SUBNET:-10.213.7}"
[[ $SUBNET =~ ^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){2}$ ]] ||
  { echo "slurm-local: error: DISAGG_SLURM_SUBNET=$SUBNET is not three octets (e.g. 10.213.7)" >&2; exit 2; }
NETNS_TAG="${SUBNET##*.}"
BRIDGE="dsbr$NETNS_TAG"
BRIDGE_ADDR="$SUBNET.1"

netns_of() { echo "disagg-$NETNS_TAG-$1"; }
node_addr() { echo "$SUBNET.$((10 + ${1#"$NODE_PREFIX"}))"; }
host_veth() { echo "dsv$NETNS_TAG-${1#"$NODE_PREFIX"}"; }

# shellcheck source=scripts/netns-probe.sh
source "$(dirname "${BASH_SOURCE[0]}")/netns-probe.sh"

# The bridge, one namespace and veth pair per node, and each node's /etc/hosts; safe to repeat.
netns_up() {
  local why node ns veth
  if why=$(netns_unsupported); then die "network namespaces are not available here: $why"; fi
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge || die "cannot create bridge $BRIDGE"
    ip addr add "$BRIDGE_ADDR/24" dev "$BRIDGE" || die "cannot give $BRIDGE the address $BRIDGE_ADDR"
  fi
  ip link set "$BRIDGE" up
  mkdir -p "$DIR/netns"
  {
    echo "127.0.0.1 localhost"
    echo "$BRIDGE_ADDR $(hostname -s)"
    for node in "${NODES[@]}"; do echo "$(node_addr "$node") $node"; done
  } >"$DIR/netns/hosts"
  for node in "${NODES[@]}"; do
    ns=$(netns_of "$node")
    veth=$(host_veth "$node")
    ip netns list | grep -qw "^$ns" || ip netns add "$ns" || die "cannot create network namespace $ns"
    if ! ip link show "$veth" >/dev/null 2>&1; then
      ip link add "$veth" type veth peer name "${veth}p" || die "cannot create veth pair $veth"
      ip link set "${veth}p" netns "$ns"
      ip -n "$ns" link set "${veth}p" name eth0
      ip -n "$ns" addr add "$(node_addr "$node")/24" dev eth0
    fi
    ip link set "$veth" master "$BRIDGE" up
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
  done
}

# Namespaces, veths (they go with their namespace), the bridge and the hosts file.
netns_down() {
  local node
  for node in "${NODES[@]}"; do ip netns del "$(netns_of "$node")" 2>/dev/null || true; done
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -rf "$DIR/netns"
}

# Starts slurmd for node $1 inside its namespaces: fresh /dev/shm, the cluster's /etc/hosts, the
# node's name as hostname. nsenter (not `ip netns exec`, which mounts a fresh /sys without the
# cgroup tree slurmd needs), unshare and bash exec in turn, so the pid written is slurmd's.
start_slurmd_in_netns() {
  local node=$1
  setsid nsenter --net="/run/netns/$(netns_of "$node")" unshare --mount --uts --propagation private -- \
    bash -c 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && mount --bind "$1" /etc/hosts && hostname "$2" &&
      exec slurmd -D -N "$2" -f "$3"' slurmd-netns "$DIR/netns/hosts" "$node" "$CONF" \
    </dev/null >>"$DIR/log/slurmd-$node.out" 2>&1 9>&- &
  echo $! >"$(slurmd_pidfile "$node")"
}

# slurm.conf's node lines: one per node, each at its own address.
netns_node_lines() {
  local node
  for node in "${NODES[@]}"; do
    echo "NodeName=$node NodeHostname=$node NodeAddr=$(node_addr "$node") Port=$SLURMD_PORT_FIRST CPUs=4 RealMemory=4000 Gres=$GPU_GRES State=UNKNOWN"
  done
}
