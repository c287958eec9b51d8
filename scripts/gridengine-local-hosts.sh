# Sourced by gridengine-local.sh: a cell of several execution hosts on this one machine
# (DISAGG_GE_HOSTS > 1). Grid Engine knows a host by the name its address resolves to, so each
# execution daemon gets what a host of its own has:
#   - its own network namespace: a veth pair on a bridge, one address per host (`eth0` =
#     <DISAGG_GE_SUBNET>.(10+i), default subnet 10.213.9; the bridge, .1, is the qmaster's side);
#   - its own UTS namespace: hostname = the host's name (ge1, ge2, ... : DISAGG_GE_HOST_PREFIX);
#   - a private mount namespace with a fresh /dev/shm, a fresh job scratch folder (the queue's
#     tmpdir, so TMPDIR is local to the host as on a real cluster) and an /etc/hosts naming the
#     qmaster (at the bridge's address) and every host.
# Its jobs inherit all of it, so the tasks of a parallel job on two hosts meet over the network only.
# The qmaster and the admin commands of this script resolve the hosts through the same names: they
# run in a mount namespace of their own whose /etc/hosts is the machine's plus the hosts' lines
# (the machine's /etc/hosts is never edited). The hosts share the machine's PID and IPC namespaces
# (the cell's scripts find daemons by pid), so each host gets a gid_range of its own: execd and the
# job watcher kill a job's processes by its additional group id, which must not be another host's.
# Clients in the machine's own namespaces (qsub, qstat, qdel) need none of the hosts' names.

GE_SUBNET="${DISAGG_GE_SUBNET:-10.213.9}"
[[ $GE_SUBNET =~ ^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){2}$ ]] ||
  { echo "gridengine-local: error: DISAGG_GE_SUBNET=$GE_SUBNET is not three octets (e.g. 10.213.9)" >&2; exit 2; }
GE_TAG="${GE_SUBNET##*.}"
GE_BRIDGE="dgbr$GE_TAG"
GE_BRIDGE_ADDR="$GE_SUBNET.1"
# What `down` must remove (namespaces and bridges made by any earlier `up`), one name a line.
GE_MADE="$HOSTS_DIR/made"
# Each host's range of additional group ids: 100 from 20000 + 100 * i (the global default is one
# range, 65400-65500, which hosts sharing a PID namespace must not share).
GE_GID_BASE=20000

# shellcheck source=scripts/netns-probe.sh
source "$(dirname "${BASH_SOURCE[0]}")/netns-probe.sh"

host_index() { echo "${1#"$HOST_PREFIX"}"; }
host_netns() { echo "disagg-ge$GE_TAG-$1"; }
host_addr() { echo "$GE_SUBNET.$((10 + $(host_index "$1")))"; }
host_veth() { echo "dgv$GE_TAG-$(host_index "$1")"; }

# The qmaster's /etc/hosts (the machine's own lines, then the hosts') and the hosts' (the qmaster's
# name at the bridge's address, then every host).
write_hosts_files() {
  local host
  mkdir -p "$HOSTS_DIR"
  {
    grep -v -E "[[:space:]]$HOST_PREFIX[0-9]+([[:space:]]|\$)" /etc/hosts
    for host in "${EXEC_HOSTS[@]}"; do echo "$(host_addr "$host") $host"; done
  } >"$HOSTS_DIR/hosts.qmaster"
  {
    echo "127.0.0.1 localhost"
    echo "$GE_BRIDGE_ADDR $(host_name)"
    for host in "${EXEC_HOSTS[@]}"; do echo "$(host_addr "$host") $host"; done
  } >"$HOSTS_DIR/hosts.exec"
}

# Runs a command with the qmaster's view of the names (a private mount namespace).
in_qmaster_view() {
  unshare --mount --propagation private -- bash -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
    in-qmaster-view "$HOSTS_DIR/hosts.qmaster" "$@"
}

# True when the running qmaster ($1) sees the names this cell needs.
qmaster_sees_hosts() { cmp -s "/proc/$1/root/etc/hosts" "$HOSTS_DIR/hosts.qmaster"; }

# The bridge, and a namespace and veth pair per host; safe to repeat.
hosts_network_up() {
  local why host ns veth
  if why=$(netns_unsupported); then
    die "a cell of ${#EXEC_HOSTS[@]} hosts needs network namespaces, which are not available here: $why (DISAGG_GE_HOSTS=1 runs one host)"
  fi
  if ! ip link show "$GE_BRIDGE" >/dev/null 2>&1; then
    ip link add "$GE_BRIDGE" type bridge || die "cannot create bridge $GE_BRIDGE"
    echo "bridge $GE_BRIDGE" >>"$GE_MADE"
    ip addr add "$GE_BRIDGE_ADDR/24" dev "$GE_BRIDGE" || die "cannot give $GE_BRIDGE the address $GE_BRIDGE_ADDR"
  fi
  ip link set "$GE_BRIDGE" up
  for host in "${EXEC_HOSTS[@]}"; do
    ns=$(host_netns "$host")
    veth=$(host_veth "$host")
    if ! ip netns list | grep -qw "^$ns"; then
      ip netns add "$ns" || die "cannot create network namespace $ns"
      echo "netns $ns" >>"$GE_MADE"
    fi
    if ! ip link show "$veth" >/dev/null 2>&1; then
      ip link add "$veth" type veth peer name "${veth}p" || die "cannot create veth pair $veth"
      echo "veth $veth" >>"$GE_MADE"
      ip link set "${veth}p" netns "$ns"
      ip -n "$ns" link set "${veth}p" name eth0
      ip -n "$ns" addr add "$(host_addr "$host")/24" dev eth0
    fi
    ip link set "$veth" master "$GE_BRIDGE" up
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
  done
}

# Every veth pair, namespace and bridge an `up` made, and the names' files. The veths go first, at
# once: a namespace's deletion would take them along, but only after `ip netns del` returns.
hosts_network_down() {
  local kind name
  [[ -f $GE_MADE ]] || return 0
  for kind in veth netns bridge; do
    while read -r made name; do
      [[ $made == "$kind" ]] || continue
      case $kind in
        netns) ip netns del "$name" 2>/dev/null || true ;;
        *) ip link del "$name" 2>/dev/null || true ;;
      esac
    done <"$GE_MADE"
  done
  rm -rf "$HOSTS_DIR"
}

# Each host's own gid_range, its whole local configuration (before its execd starts).
configure_host_gids() {
  local host file first current
  for host in "${EXEC_HOSTS[@]}"; do
    first=$((GE_GID_BASE + 100 * $(host_index "$host")))
    current=$(in_qmaster_view qconf -sconf "$host" 2>/dev/null) || current=''
    grep -qx "gid_range *$first-$((first + 99))" <<<"$current" && continue
    file=$(mktemp -d)/$host
    echo "gid_range $first-$((first + 99))" >"$file"
    if [[ -n $current ]]; then quietly in_qmaster_view qconf -Mconf "$file"; else quietly in_qmaster_view qconf -Aconf "$file"; fi
    rm -rf "$(dirname "$file")"
  done
}

# Starts the execution daemon of host $1 in its namespaces. sge_execd makes itself a daemon; its
# pid file is in its spool folder, named by the host.
start_execd_on() {
  local host=$1
  setsid nsenter --net="/run/netns/$(host_netns "$host")" unshare --mount --uts --propagation private -- \
    bash -c 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && mount -t tmpfs -o mode=1777 tmpfs "$3" &&
      mount --bind "$1" /etc/hosts && hostname "$2" && exec /usr/sbin/sge_execd' execd-host \
    "$HOSTS_DIR/hosts.exec" "$host" "$JOB_TMPDIR" </dev/null >>"$HOSTS_DIR/execd-$host.out" 2>&1 ||
    die "sge_execd of $host did not start: $(tail -n 5 "$HOSTS_DIR/execd-$host.out" 2>/dev/null)"
}
