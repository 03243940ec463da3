#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, with real pods, for running the real
# OpenStack-Helm charts (the kwok cluster of hack/local-cluster.sh only simulates nodes):
#
#   hack/real-cluster.sh up|down|status    (root)
#   hack/real-cluster.sh deps              install containerd, runc and the CNI plugins if missing
#   hack/real-cluster.sh ctr ARGS...       ctr against this cluster's containerd, namespace k8s.io
#                                          (e.g. `ctr images import IMAGE.tar`: pods use local images only)
#
# What runs: containerd (Debian package, started by hand with its own configuration and state
# under the state directory, not /etc/containerd, /var/lib/containerd or /run/containerd), etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy (iptables mode),
# and CoreDNS as a Deployment serving cluster.local only (no upstream forward). The Kubernetes
# binaries, CoreDNS and the pod sandbox program are built from the Go module proxy by
# `hack/install-test-tools.sh node` (`make real-cluster-up` runs it) into bin/envtest-<k8s version>/.
#
# Network: a private bridge (REAL_CLUSTER_BRIDGE, default ks0) carries the node address
# 198.18.0.1 and the pods (198.18.0.0/16); Services are 198.19.0.0/16 (kube-dns 198.19.0.10). Both
# ranges are reserved for tests (RFC 2544), so no address can mean a real network. Pods get a
# route to the bridge and to the Service range only (no default route), and two iptables chains
# in the mangle table (before every filter rule of kube-proxy and the kubelet) drop anything else:
#   KUPENSTACK-RC-FWD  nothing is forwarded between the bridge and any other interface (v4 and v6);
#   KUPENSTACK-RC-IN   from the bridge, the host accepts only replies and the API server
#                      (198.18.0.1:BASE+6443, see Ports, directly or through the kubernetes
#                      Service); every other host service (kubelet, anything on 0.0.0.0, the
#                      host's other addresses) is unreachable from pods; all IPv6 is dropped.
# (hostNetwork pods share the host's network namespace: none of this applies to them.)
# Images: nothing is ever pulled. containerd has no registry configuration and reaches any registry
# only through an HTTP(S) proxy at 127.0.0.1:9 where nothing listens, so a missing image fails at
# once (ErrImagePull, no DNS query leaves the machine); the life-cycle sets the charts' pull policy
# to Never, which makes it ErrImageNeverPull. Import images with `hack/real-cluster.sh ctr images
# import FILE`. The pod sandbox is localhost/kupenstack/pause, CoreDNS localhost/kupenstack/coredns.
#
# Ports (REAL_CLUSTER_PORT_BASE, default 20000; the kwok cluster uses 16443 and 12379-12380, envtest
# picks ephemeral ports from 32768 up): kube-apiserver BASE+6443 on 198.18.0.1; etcd BASE+2379
# and BASE+2380, controller-manager BASE+257, scheduler BASE+259, kubelet healthz BASE+248,
# kube-proxy metrics BASE+249 and healthz BASE+256 on 127.0.0.1; the kubelet's API BASE+250 on
# 198.18.0.1; containerd listens on unix sockets only, plus its CRI streaming server (kubectl
# exec/logs) on a random 127.0.0.1 port.
#
# Settings (environment): REAL_CLUSTER_STATE_DIR (default /var/lib/kupenstack/real-cluster; pki,
# configuration, etcd, kubelet and containerd state, logs, pid files, kubeconfig, the host snapshot),
# REAL_CLUSTER_BRIDGE, REAL_CLUSTER_PORT_BASE, REAL_CLUSTER_NODE_NAME (default: the hostname),
# TOOLS (default bin/envtest-<k8s version>), REAL_CLUSTER_PURGE=1 (`down` also deletes the imported
# images, which it keeps by default).
#
# The host is left as found. The first `up` records the host (every writable kernel tunable, which
# iptables chains and nf_tables tables, mounts, links and host paths exist); `down` stops only the
# processes `up` started (pid file + executable check, and containerd's shims by their socket
# address), lets the kubelet tear the pods down, unmounts what the pods and containerd mounted,
# deletes the bridge and leftover veths, every iptables chain that was not there before
# (kube-proxy's, the kubelet's KUBE-FIREWALL/KUBE-KUBELET-CANARY/KUBE-IPTABLES-HINT, ours; v4 and
# v6) and the then empty tables iptables-nft created for them, the CNI state, the kubelet's cgroups,
# the host paths the kubelet and containerd 1.6 create whatever they are told
# (/var/lib/kubelet/device-plugins, /var/log/containers, /run/containerd/s, /run/netns,
# /var/lib/cni) unless they were there before, and writes back every kernel tunable that changed
# (the kubelet sets vm.overcommit_memory=1, kernel.panic=10, kernel.panic_on_oops=1, ...; the bridge
# plugin ip_forward). test/realcluster checks it (KUPENSTACK_REAL_CLUSTER=1). Debian packages it
# installed stay installed.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2} # as in the Makefile and install-test-tools.sh
TOOLS=${TOOLS:-$ROOT/bin/envtest-$K8S_VERSION}
STATE=${REAL_CLUSTER_STATE_DIR:-/var/lib/kupenstack/real-cluster}
BRIDGE=${REAL_CLUSTER_BRIDGE:-ks0}
PORT_BASE=${REAL_CLUSTER_PORT_BASE:-20000}
NODE_NAME=${REAL_CLUSTER_NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}
PURGE=${REAL_CLUSTER_PURGE:-}

POD_CIDR=198.18.0.0/16
NODE_IP=198.18.0.1       # the bridge's address: pods' gateway, node InternalIP, API server
POD_RANGE_START=198.18.1.1
SERVICE_CIDR=198.19.0.0/16
SERVICE_IP=198.19.0.1    # the kubernetes Service
DNS_IP=198.19.0.10       # kube-dns
API_PORT=$((PORT_BASE + 6443))
ETCD_PORT=$((PORT_BASE + 2379))
KUBELET_PORT=$((PORT_BASE + 250))
NO_PROXY_PORT=9          # registries are reached through a proxy here, where nothing listens
CHAIN_IN=KUPENSTACK-RC-IN
CHAIN_FWD=KUPENSTACK-RC-FWD
PACKAGES=(containerd runc containernetworking-plugins)
CNI_BIN=/usr/lib/cni

PKI=$STATE/pki
# What pki() makes, by version: 2 = the CA has keyUsage (strict verifiers need it).
PKI_RECIPE=2
CONF=$STATE/conf
LOGS=$STATE/logs
RUN=$STATE/run          # pid files
HOST=$STATE/host        # the host as the first `up` found it
CTRD=$STATE/containerd  # containerd root, state, sockets
CTRD_SOCK=$CTRD/containerd.sock
KC=$STATE/kubeconfig
MARKER=$STATE/.kupenstack-real-cluster # `down` deletes only a directory that carries it
# Host paths the kubelet, containerd or the CNI plugins create outside the state directory;
# `down` removes those that did not exist before `up`.
HOST_PATHS=(/run/netns /var/lib/cni /run/containerd /var/log/containers /var/log/pods /var/lib/kubelet)
# Host-wide mount points they use (the rest is under the state directory), and the charts'
# host paths with Bidirectional mounts (neutron's /run/netns, libvirt's and nova's).
MOUNT_PREFIXES=("$STATE/" /run/netns/ /run/containerd/ /var/lib/kubelet/ /var/lib/nova/ /var/lib/libvirt/
  /run/libvirt/ /run/openvswitch/ /var/lib/neutron/)
# Host paths the OpenStack-Helm charts' hostPath volumes create (openvswitch, libvirt, nova,
# neutron, mariadb, rabbitmq, and glance's image store without a storage class): `down` deletes
# those that did not exist before `up`, with their content (the cloud's data goes with the cluster).
CHART_PATHS=(/etc/openvswitch /run/openvswitch /var/lib/openvswitch /var/log/openvswitch /etc/libvirt
  /var/lib/libvirt /var/log/libvirt /run/libvirt /etc/nova /var/lib/nova /etc/neutron /var/lib/neutron
  /var/log/neutron /var/lib/openstack-helm /var/lib/glance /etc/iscsi /lib/modules /tmp/pod-shared
  /run/secrets /run/xtables.lock /run/libvirtd.pid) # libvirt mounts the host's /run: its
  # service account token's mount point, the agents' iptables lock and the pid file of a libvirtd
  # killed with its pod (the chart's script writes /var/run/libvirtd.pid) land there
# The charts' host paths that hold the cloud's data and can exist before `up`: a host with Debian's
# nova, glance or neutron packages (the all-in-one's) has their /var/lib directories, and the
# charts' pods write into them as user 42424 (nova's instances and compute_id, neutron's metadata
# proxy sockets). `up` records each entry's owner, group and mode; `down` deletes the entries added
# since and gives the recorded ones their owner and mode back.
CHART_DATA_PATHS=(/var/lib/nova /var/lib/glance /var/lib/neutron /var/lib/libvirt /var/lib/openvswitch
  /var/log/libvirt /var/log/neutron /var/log/openvswitch /etc/libvirt /etc/openvswitch)
# Devices whose owner and mode the charts change (libvirt: /dev/kvm for qemu).
DEVICES=(/dev/kvm /dev/net/tun)
# Kernel tunables never compared nor restored: counters and triggers, not settings.
VOLATILE_SYSCTL='^(kernel/ns_last_pid|kernel/random/|vm/drop_caches|vm/compact_memory|net/ipv[46]/route/flush|kernel/init_private_)'

log() { printf '[real-cluster %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
trap 'die "failed at line $LINENO: $BASH_COMMAND"' ERR
kubectl() { "$TOOLS/kubectl" --kubeconfig "$KC" --cache-dir "$STATE/kube-cache" "$@"; }
ctr() { command ctr --address "$CTRD_SOCK" --namespace k8s.io "$@"; }

# exe NAME: the executable a component runs from.
exe() { if [[ $1 == containerd ]]; then command -v containerd; else readlink -f "$TOOLS/$1"; fi; }

# running NAME: the process in NAME.pid is still our binary (a pid can be reused).
running() {
  local f=$RUN/$1.pid
  [[ -f $f ]] && [[ $(readlink "/proc/$(<"$f")/exe" 2>/dev/null) == "$(exe "$1")" ]]
}

# start NAME ARGS...: run the component in a session of its own (it outlives this script).
start() {
  local name=$1; shift
  if running "$name"; then log "$name already running"; return; fi
  log "starting $name (log: $LOGS/$name.log)"
  setsid "$(exe "$name")" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}

# stop NAME...: SIGTERM to each, then SIGKILL to those still there after 20 s (kube-apiserver can
# hang in its shutdown once etcd is gone).
stop() {
  local name pids=() pid i
  for name in "$@"; do
    if running "$name"; then
      pid=$(<"$RUN/$name.pid")
      log "stopping $name ($pid)"
      kill "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$RUN/$name.pid"
  done
  for ((i = 0; i < 200; i++)); do
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && break; pid=; done
    [[ -z ${pid:-} ]] && return
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null && { log "  $pid ignored SIGTERM: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; }
  done
  return 0
}

# wait_for WHAT SECONDS CMD...: a bound for a broken start, not a performance target.
wait_for() {
  local what=$1 secs=$2 i; shift 2
  for ((i = 0; i < secs * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  die "$what not ready after ${secs}s: see $LOGS/*.log; '$0 down' cleans up"
}

# put FILE: stdin into FILE, only when it differs (kube-proxy exits when its configuration file is
# written, even with the same content).
put() {
  local tmp=$1.new
  cat >"$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}

port_free() { [[ -z $(ss -Hltn "sport = :$1") ]]; }

deps() {
  install_missing "${PACKAGES[@]}"
  # iptables over nf_tables: the kubelet and kube-proxy create the ip/ip6 filter, nat and mangle
  # tables when the host had none; `down` deletes them again with nft. Asked only now: on a fresh
  # machine iptables comes with the packages above (containernetworking-plugins needs it).
  if [[ $(iptables -V 2>/dev/null) == *nf_tables* ]]; then
    install_missing nftables
  fi
}

install_missing() { # PACKAGE...: apt-get install those not installed yet
  local missing=() p
  for p in "$@"; do
    [[ $(dpkg-query -W -f '${Status}' "$p" 2>/dev/null) == 'install ok installed' ]] || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]} (Debian packages; they stay installed)"
  # No systemd here, so the package starts no containerd of its own; the lock timeout waits for
  # another apt run instead of failing.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "${missing[@]}" >"${LOGS:-/tmp}/apt.log" 2>&1 ||
    die "apt-get install ${missing[*]} failed: see ${LOGS:-/tmp}/apt.log"
}

# --- the host as found ----------------------------------------------------------------------

# sysctls: every readable, writable kernel tunable as path<TAB>value (single-line values).
sysctls() {
  local f v
  while IFS= read -r -d '' f; do
    [[ ${f#/proc/sys/} =~ $VOLATILE_SYSCTL ]] && continue
    sysctl_value "$f" || continue
    printf '%s\t%s\n' "${f#/proc/sys/}" "$v"
  done < <(find /proc/sys -type f -perm -u+w -print0)
}

# sysctl_value FILE: its value into v (the caller's), without a fork; false if unreadable.
sysctl_value() {
  v=$'\n'
  { IFS= read -r -d '' v <"$1" || true; } 2>/dev/null
  [[ $v != $'\n' ]] || return 1
  v=${v%$'\n'}
  [[ $v != *$'\n'* ]] # single-line values only
}

iptables_chains() { # FAMILY: "table chain" for every chain
  local t
  for t in filter nat mangle raw; do
    "$1-save" -t "$t" 2>/dev/null | sed -n "s/^:\([^ ]*\) .*/$t \1/p"
  done
}

record_host() {
  [[ -f $HOST/done ]] && return
  log "recording the host as found (restored by '$0 down')"
  rm -rf "$HOST" && mkdir -p "$HOST"
  sysctls >"$HOST/sysctls"
  iptables_chains iptables >"$HOST/chains4"
  iptables_chains ip6tables >"$HOST/chains6"
  awk '{print $5}' /proc/self/mountinfo >"$HOST/mounts"
  ip -o link | awk -F': ' '{print $2}' | cut -d@ -f1 >"$HOST/links"
  if command -v nft >/dev/null; then nft list tables >"$HOST/nft-tables"; fi
  local p
  for p in "${HOST_PATHS[@]}"; do [[ -e $p ]] && echo "$p"; done >"$HOST/paths"
  for p in /sys/fs/cgroup/*/kubepods; do [[ -d $p ]] && echo "$p"; done >"$HOST/cgroups"
  for p in "${CHART_PATHS[@]}"; do [[ -e $p ]] && echo "$p"; done >"$HOST/chart-paths"
  for p in "${CHART_DATA_PATHS[@]}"; do
    [[ -d $p && ! -L $p ]] && find "$p" -xdev -printf '%U %G %m %p\n'; done >"$HOST/chart-trees"
  for p in "${DEVICES[@]}"; do [[ -e $p ]] && stat -c '%a %u %g %n' "$p"; done >"$HOST/devices"
  for p in /sys/fs/cgroup/*/osh-libvirt /sys/fs/cgroup/*/machine /sys/fs/cgroup/*/machine.slice; do
    [[ -d $p ]] && echo "$p"; done >"$HOST/vm-cgroups"
  ip netns list 2>/dev/null | awk '{print $1}' >"$HOST/netns"
  # The charts mount the host's root with HostToContainer propagation and share /run/netns
  # (Bidirectional): / must be a shared mount, which systemd makes it and a host without it not.
  awk '$5 == "/" {print ($7 ~ /^shared:/) ? "shared" : "private"}' /proc/self/mountinfo >"$HOST/root-propagation"
  touch "$HOST/done"
}

# restore_sysctls: write back every recorded tunable that differs. Some writes change others
# (net.ipv4.conf.all.forwarding resets accept_redirects), so repeat until a pass changes nothing.
restore_sysctls() {
  [[ -f $HOST/sysctls ]] || return 0
  local key old v pass changed
  for pass in 1 2 3; do
    changed=
    while IFS=$'\t' read -r key old; do
      [[ -w /proc/sys/$key ]] || continue
      sysctl_value "/proc/sys/$key" || continue
      [[ $v == "$old" ]] && continue
      log "  kernel tunable ${key//\//.}: $v -> $old"
      printf '%s\n' "$old" >"/proc/sys/$key" || log "  could not restore ${key//\//.}"
      changed=1
    done <"$HOST/sysctls"
    [[ -n $changed ]] || return 0
  done
}

# --- network ----------------------------------------------------------------------------------

ipt() { # FAMILY ARGS...: add a rule unless it is there
  local fam=$1; shift
  "$fam" -w 5 -C "$@" 2>/dev/null || "$fam" -w 5 -A "$@"
}

network() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    log "creating the bridge $BRIDGE ($NODE_IP/${POD_CIDR#*/})"
    ip link add "$BRIDGE" type bridge
  fi
  # No IPv6 on the bridge: pods cannot reach the host over link-local addresses either.
  sysctl -qw "net.ipv6.conf.$BRIDGE.disable_ipv6=1"
  [[ $(ip -4 -o addr show dev "$BRIDGE") == *" $NODE_IP/"* ]] || ip addr add "$NODE_IP/${POD_CIDR#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # Pod -> Service -> pod is routed through the host; `down` puts both back.
  sysctl -qw net.ipv4.ip_forward=1
  [[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]] ||
    die "bridge netfilter is missing (/proc/sys/net/bridge): Service replies between pods need it"
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
  local fam
  for fam in iptables ip6tables; do
    "$fam" -w 5 -t mangle -N "$CHAIN_IN" 2>/dev/null || true
    "$fam" -w 5 -t mangle -N "$CHAIN_FWD" 2>/dev/null || true
    ipt "$fam" INPUT -t mangle -i "$BRIDGE" -j "$CHAIN_IN"
    ipt "$fam" FORWARD -t mangle -i "$BRIDGE" -j "$CHAIN_FWD"
    ipt "$fam" FORWARD -t mangle -o "$BRIDGE" -j "$CHAIN_FWD"
  done
  # IPv4: pod <-> pod on the bridge, replies, the API server; nothing else.
  ipt iptables "$CHAIN_FWD" -t mangle -i "$BRIDGE" -o "$BRIDGE" -j RETURN
  ipt iptables "$CHAIN_FWD" -t mangle -j DROP
  ipt iptables "$CHAIN_IN" -t mangle -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
  ipt iptables "$CHAIN_IN" -t mangle -d "$NODE_IP" -p tcp --dport "$API_PORT" -j RETURN
  ipt iptables "$CHAIN_IN" -t mangle -j DROP
  ipt ip6tables "$CHAIN_IN" -t mangle -j DROP
  ipt ip6tables "$CHAIN_FWD" -t mangle -j DROP
  mkdir -p "$CONF/cni" "$STATE/cni"
  # bridge + host-local; routes: the pod range on the bridge, Services through the host, no default.
  put "$CONF/cni/10-kupenstack.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "kupenstack", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam",
            "ranges": [[{"subnet": "$POD_CIDR", "rangeStart": "$POD_RANGE_START", "gateway": "$NODE_IP"}]],
            "routes": [{"dst": "$SERVICE_CIDR", "gw": "$NODE_IP"}]}}]}
EOF
}

unnetwork() {
  local fam t rule chain l
  for fam in iptables ip6tables; do
    local before=$HOST/chains4
    [[ $fam == ip6tables ]] && before=$HOST/chains6
    [[ -f $before ]] || before=/dev/null
    # Chains that were not there before and are ours, kube-proxy's or the kubelet's. Jumps first.
    local new
    new=$(iptables_chains "$fam" | grep -E ' (KUBE-|KUPENSTACK-RC-)' | grep -vxFf "$before" || true)
    [[ -n $new ]] || continue
    while read -r t chain; do
      { "$fam-save" -t "$t" | grep -E -- "-j $chain( |\$)" | grep -v "^-A $chain " || true; } | sed 's/^-A/-D/' |
        while read -r rule; do eval "$fam -w 5 -t $t $rule" || true; done
    done <<<"$new"
    while read -r t chain; do "$fam" -w 5 -t "$t" -F "$chain" 2>/dev/null || true; done <<<"$new"
    while read -r t chain; do
      "$fam" -w 5 -t "$t" -X "$chain" 2>/dev/null || log "  could not delete $fam chain $t/$chain"
    done <<<"$new"
    log "removed $fam chains: $(awk '{printf "%s/%s ", $1, $2}' <<<"$new")"
  done
  # nf_tables tables that appeared (iptables-nft creates a table on first use), once empty again.
  if [[ -f $HOST/nft-tables ]]; then
    local family table
    while read -r _ family table; do
      grep -qxF "table $family $table" "$HOST/nft-tables" && continue
      fam=iptables
      [[ $family == ip6 ]] && fam=ip6tables
      [[ $family == ip || $family == ip6 ]] || continue
      if "$fam-save" -t "$table" 2>/dev/null | grep -vE '^(#|\*|COMMIT$|:[A-Z]+ ACCEPT )' >/dev/null; then
        log "  nf_tables table $family $table has rules still: left"
      else
        nft delete table "$family" "$table" && log "deleted the new empty nf_tables table $family $table"
      fi
    done < <(nft list tables)
  fi
  # Veths left on the bridge (pods the kubelet did not tear down), then the bridge.
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    for l in $(ip -o link show master "$BRIDGE" | awk -F': ' '{print $2}' | cut -d@ -f1); do
      ip link del "$l" 2>/dev/null && log "  deleted leftover link $l"
    done
    ip link del "$BRIDGE" && log "deleted the bridge $BRIDGE"
  fi
}

# --- containerd -----------------------------------------------------------------------------

containerd_config() {
  mkdir -p "$CTRD/root" "$CTRD/state" "$CTRD/certs.d"
  put "$CONF/containerd.toml" <<EOF
# containerd of hack/real-cluster.sh: own root, state and sockets; no registry is configured.
version = 2
root = "$CTRD/root"
state = "$CTRD/state"
[grpc]
  address = "$CTRD_SOCK"
[ttrpc]
  address = "$CTRD/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # The VM's root lacks CAP_SYS_RESOURCE: runc cannot set oom_score_adj=-998 for a sandbox.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$CTRD/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$CONF/cni"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$CTRD/certs.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CTRD/opt"
EOF
}

# oci_archive OUT NAME BINARY: a one-layer OCI image archive with BINARY as /NAME-of-binary,
# its entrypoint (what `ctr images import` loads).
oci_archive() {
  local out=$1 name=$2 bin=$3 d layer config manifest index ld cd md
  d=$(mktemp -d)
  mkdir -p "$d/root" "$d/blobs/sha256"
  install -m 0755 "$bin" "$d/root/$(basename "$bin")"
  tar --numeric-owner --owner=0 --group=0 --mtime=@0 --sort=name -C "$d/root" -cf "$d/layer.tar" .
  ld=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  mv "$d/layer.tar" "$d/blobs/sha256/$ld"
  config='{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/'$(basename "$bin")'"],"Env":["PATH=/"]},"rootfs":{"type":"layers","diff_ids":["sha256:'$ld'"]}}'
  cd=$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)
  printf '%s' "$config" >"$d/blobs/sha256/$cd"
  manifest='{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:'$cd'","size":'${#config}'},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:'$ld'","size":'$(stat -c %s "$d/blobs/sha256/$ld")'}]}'
  md=$(printf '%s' "$manifest" | sha256sum | cut -d' ' -f1)
  printf '%s' "$manifest" >"$d/blobs/sha256/$md"
  index='{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:'$md'","size":'${#manifest}',"annotations":{"io.containerd.image.name":"'$name'","org.opencontainers.image.ref.name":"'${name##*:}'"}}]}'
  printf '%s' "$index" >"$d/index.json"
  printf '%s' '{"imageLayoutVersion":"1.0.0"}' >"$d/oci-layout"
  tar -C "$d" -cf "$out" oci-layout index.json blobs
  rm -rf "$d"
}

# import_image NAME BINARY: import a one-binary image unless containerd has it.
import_image() {
  # (no grep -q in a pipeline: it exits early, and pipefail turns the writer's SIGPIPE into "no")
  ctr images ls -q | grep -xF "$1" >/dev/null && return
  log "importing $1"
  oci_archive "$STATE/image.tar" "$1" "$2"
  ctr images import "$STATE/image.tar" >/dev/null
  rm -f "$STATE/image.tar"
}

# --- PKI --------------------------------------------------------------------------------------

pki() {
  # The marker names the recipe: a stopped cluster of an older one gets new certificates; a
  # running one would keep the old CA in its kubelet and Secrets, so it must go down first.
  [[ $(cat "$PKI/done" 2>/dev/null) == "$PKI_RECIPE" ]] && return
  if [[ -f $PKI/done ]] && { running kube-apiserver || running kubelet || running etcd; }; then
    die "the running cluster's certificates are of an older recipe: run '$0 down' first"
  fi
  log "creating a CA, certificates for every component and the kubeconfigs"
  rm -rf "$PKI" && mkdir -p "$PKI"
  (
    cd "$PKI"
    # ECDSA P-256 keys: generating nine RSA keys takes seconds on a loaded machine.
    # keyUsage on the CA: strict verifiers (Python 3.13+'s default context, as in the clients of
    # Debian testing's images) refuse a CA certificate without it.
    openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout ca.key -out ca.crt -days 3650 \
      -subj /CN=kupenstack-real-cluster-ca -addext keyUsage=critical,digitalSignature,keyCertSign,cRLSign
    openssl ecparam -name prime256v1 -genkey -noout -out sa.key && openssl ec -in sa.key -pubout -out sa.pub
    cert() { # NAME SUBJECT SAN EXTENDED-KEY-USAGE
      { echo basicConstraints=CA:FALSE; echo keyUsage=critical,digitalSignature,keyEncipherment
        echo "extendedKeyUsage=$4"; [[ -z $3 ]] || echo "subjectAltName=$3"; } >"$1.ext"
      openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$1.key" -out "$1.csr" -subj "$2"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 3650 \
        -extfile "$1.ext"
      rm -f "$1.csr" "$1.ext"
    }
    cert apiserver /CN=kube-apiserver \
      "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:$SERVICE_IP,IP:$NODE_IP,IP:127.0.0.1" \
      serverAuth
    cert apiserver-kubelet-client /O=system:masters/CN=kube-apiserver-kubelet-client "" clientAuth
    cert admin /O=system:masters/CN=kubernetes-admin "" clientAuth
    cert controller-manager /CN=system:kube-controller-manager "" clientAuth
    cert scheduler /CN=system:kube-scheduler "" clientAuth
    cert kube-proxy /CN=system:kube-proxy "" clientAuth
    cert kubelet-client "/O=system:nodes/CN=system:node:$NODE_NAME" "" clientAuth
    cert kubelet "/CN=$NODE_NAME" "DNS:$NODE_NAME,IP:$NODE_IP" serverAuth
    local u
    for u in admin controller-manager scheduler kube-proxy kubelet-client; do
      cat >"$u.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: real-cluster, cluster: {certificate-authority: $PKI/ca.crt, server: "https://$NODE_IP:$API_PORT"}}]
users: [{name: $u, user: {client-certificate: $PKI/$u.crt, client-key: $PKI/$u.key}}]
contexts: [{name: real-cluster, context: {cluster: real-cluster, user: $u}}]
current-context: real-cluster
EOF
    done
  ) >/dev/null 2>&1
  chmod 600 "$PKI"/*.key
  cp "$PKI/admin.kubeconfig" "$KC"
  echo "$PKI_RECIPE" >"$PKI/done"
}

# --- the node ---------------------------------------------------------------------------------

node_config() {
  printf '# no upstream resolver for pods: cluster.local only (CoreDNS)\n' | put "$CONF/resolv.conf"
  put "$CONF/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 host without systemd as PID 1
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CTRD_SOCK
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((PORT_BASE + 248))
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $PKI/ca.crt}}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
resolvConf: $CONF/resolv.conf
podLogsDir: $STATE/pod-logs
failSwapOn: false
# Images cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "200Mi", nodefs.available: "3%", imagefs.available: "3%"}
EOF
  put "$CONF/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $PKI/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:$((PORT_BASE + 256))
metricsBindAddress: 127.0.0.1:$((PORT_BASE + 249))
nodePortAddresses: [$NODE_IP/32]
# Leave the host's conntrack and route_localnet tunables alone.
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

coredns_manifests() {
  cat <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: system:coredns}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: system:coredns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:coredns}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    cluster.local in-addr.arpa ip6.arpa {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            ttl 30
        }
        cache 30
        reload
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      terminationGracePeriodSeconds: 5
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        args: ["-conf", "/etc/coredns/Corefile"]
        ports:
        - {containerPort: 53, name: dns, protocol: UDP}
        - {containerPort: 53, name: dns-tcp, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /health, port: 8080}, initialDelaySeconds: 10}
        resources: {requests: {cpu: 50m, memory: 50Mi}, limits: {memory: 170Mi}}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
}

images() {
  # The image tags carry the build's recipe hash: a changed recipe is a new image.
  local pause coredns
  pause=$(readlink -f "$TOOLS/pause") coredns=$(readlink -f "$TOOLS/coredns")
  PAUSE_IMAGE=localhost/kupenstack/pause:${pause##*/pause-}
  COREDNS_IMAGE=localhost/kupenstack/coredns:${coredns##*/coredns-}
}

node_ready() { kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -x True >/dev/null; }

up() {
  [[ $EUID -eq 0 ]] || die "run as root: the cluster creates a bridge, iptables rules and mounts"
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy coredns pause; do
    [[ -x $TOOLS/$b ]] || die "$TOOLS/$b missing: run hack/install-test-tools.sh node"
  done
  [[ -d $STATE && ! -f $MARKER ]] && die "$STATE exists but is not this script's: set REAL_CLUSTER_STATE_DIR"
  mkdir -p "$STATE" "$CONF" "$LOGS" "$RUN" && chmod 700 "$STATE" && touch "$MARKER"
  deps
  if ! running etcd; then port_free "$ETCD_PORT" && port_free $((ETCD_PORT + 1)) ||
    die "port $ETCD_PORT or $((ETCD_PORT + 1)) in use: set REAL_CLUSTER_PORT_BASE"; fi
  if ! running kube-apiserver; then port_free "$API_PORT" ||
    die "port $API_PORT in use: set REAL_CLUSTER_PORT_BASE"; fi
  record_host
  [[ $(<"$HOST/root-propagation") == shared ]] || mount --make-shared /
  images
  network
  containerd_config
  # An HTTP(S) proxy where nothing listens: a pull can never resolve a registry's name.
  HTTP_PROXY=http://127.0.0.1:$NO_PROXY_PORT HTTPS_PROXY=http://127.0.0.1:$NO_PROXY_PORT NO_PROXY= \
    start containerd --config "$CONF/containerd.toml"
  wait_for containerd 30 ctr version
  import_image "$PAUSE_IMAGE" "$TOOLS/pause"
  import_image "$COREDNS_IMAGE" "$TOOLS/coredns"
  pki
  start etcd --name real-cluster --data-dir "$STATE/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "real-cluster=http://127.0.0.1:$((ETCD_PORT + 1))"
  # InternalIP first: the hostname resolves to 127.0.0.1 here.
  start kube-apiserver --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --advertise-address "$NODE_IP" --bind-address "$NODE_IP" --secure-port "$API_PORT" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" --client-ca-file "$PKI/ca.crt" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$PKI/apiserver-kubelet-client.key" --kubelet-certificate-authority "$PKI/ca.crt" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC --allow-privileged=true \
    --profiling=false
  # The controller-manager and the scheduler need RBAC bootstrapped: start them after /readyz.
  wait_for kube-apiserver 90 kubectl get --raw /readyz
  local c
  for c in controller-manager scheduler; do
    local port=$((PORT_BASE + 257)) extra=()
    [[ $c == scheduler ]] && port=$((PORT_BASE + 259))
    [[ $c == controller-manager ]] && extra=(--service-account-private-key-file "$PKI/sa.key"
      --root-ca-file "$PKI/ca.crt" --use-service-account-credentials=true
      --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key")
    start "kube-$c" --kubeconfig "$PKI/$c.kubeconfig" --authentication-kubeconfig "$PKI/$c.kubeconfig" \
      --authorization-kubeconfig "$PKI/$c.kubeconfig" --bind-address 127.0.0.1 --secure-port "$port" \
      --leader-elect=false --profiling=false "${extra[@]}"
  done
  node_config
  start kubelet --config "$CONF/kubelet.yaml" --kubeconfig "$PKI/kubelet-client.kubeconfig" \
    --root-dir "$STATE/kubelet" --node-ip "$NODE_IP" --hostname-override "$NODE_NAME"
  start kube-proxy --config "$CONF/kube-proxy.yaml"
  wait_for "node $NODE_NAME" 120 node_ready
  coredns_manifests | kubectl apply -f - >/dev/null
  wait_for CoreDNS 120 kubectl -n kube-system rollout status deployment/coredns --timeout 1s
  log "ready: export KUBECONFIG=$KC (kubectl: $TOOLS/kubectl)"
}

# --- down -------------------------------------------------------------------------------------

# our_shims: containerd's shims serving this cluster's containerd (found by its socket address).
our_shims() {
  local p
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/exe" 2>/dev/null) == */containerd-shim-runc-v2 ]] || continue
    [[ $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) == *" -address $CTRD_SOCK "* ]] && echo "${p#/proc/}"
  done
  return 0
}

down() {
  [[ $EUID -eq 0 ]] || die "run as root"
  [[ -d $STATE ]] || { log "nothing to stop: $STATE does not exist"; return 0; }
  [[ -f $MARKER ]] || die "$STATE is not this script's (no $MARKER): not touching it"
  # Nothing may recreate pods, then the kubelet tears every pod down itself (CNI DEL, unmounts).
  stop kube-controller-manager kube-scheduler
  if running kube-apiserver && running kubelet; then
    log "deleting every pod (the kubelet tears them down)"
    kubectl delete pods --all-namespaces --all --grace-period 1 --wait --timeout 90s >/dev/null 2>&1 ||
      log "  pods not all gone: removing the rest through containerd"
  fi
  stop kubelet kube-proxy kube-apiserver
  stop etcd
  if running containerd; then
    local t
    for t in $(ctr tasks ls -q 2>/dev/null); do ctr tasks kill -s KILL "$t" >/dev/null 2>&1 || true; done
    sleep 1
    for t in $(ctr tasks ls -q 2>/dev/null); do ctr tasks rm -f "$t" >/dev/null 2>&1 || true; done
    for t in $(ctr containers ls -q 2>/dev/null); do ctr containers rm "$t" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  local p
  for p in $(our_shims); do log "stopping containerd shim $p"; kill -KILL "$p" 2>/dev/null || true; done
  # What a killed shim leaves: its socket in /run/containerd/s, named by a hash of containerd's
  # address, the namespace and the task (containerd 1.6 puts it there whatever its state
  # directory), and the CNI results of its sandbox.
  for p in "$CTRD"/state/io.containerd.runtime.v2.task/k8s.io/*; do
    [[ -d $p ]] || continue
    rm -f "/run/containerd/s/$(printf '%s' "$CTRD_SOCK/k8s.io/${p##*/}" | sha256sum | cut -c1-64)" \
      /var/lib/cni/results/*-"${p##*/}"-*
  done
  kill_pods
  kill_vms
  unmount
  unnetwork
  cloud_leftovers
  host_paths
  for p in /sys/fs/cgroup/*/kubepods; do
    [[ -d $p && -f $HOST/done ]] || continue
    grep -qxF "$p" "$HOST/cgroups" && continue
    find "$p" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [[ -d $p ]] && log "  cgroup $p not empty: left"
  done
  restore_sysctls
  if [[ -n $PURGE ]]; then
    rm -rf --one-file-system "$STATE"
    log "stopped; $STATE deleted"
  else
    # Keep the imported images (the content store) for the next `up`; everything else goes.
    find "$STATE" -mindepth 1 -maxdepth 1 ! -name containerd ! -name .kupenstack-real-cluster \
      -exec rm -rf --one-file-system {} +
    find "$CTRD" -mindepth 1 -maxdepth 1 ! -name root -exec rm -rf --one-file-system {} + 2>/dev/null || true
    log "stopped; images kept in $CTRD/root (REAL_CLUSTER_PURGE=1 deletes them)"
  fi
}

# kill_pods: the processes of pods nobody tore down (kubelet and containerd gone, shims killed):
# everything in the kubelet's cgroups, when the kubelet of this cluster created them.
kill_pods() {
  local cg pids=() i
  [[ -f $HOST/done ]] || return 0 # without the record, which cgroups are ours is unknown
  for cg in /sys/fs/cgroup/*/kubepods; do
    [[ -d $cg ]] || continue
    grep -qxF "$cg" "$HOST/cgroups" 2>/dev/null && continue
    mapfile -t -O "${#pids[@]}" pids < <(find "$cg" -name cgroup.procs -exec cat {} +)
  done
  ((${#pids[@]})) || return 0
  log "killing ${#pids[@]} leftover pod processes"
  kill -KILL "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "${pids[@]}" 2>/dev/null || return 0
    sleep 0.1
  done
}

# kill_vms: the QEMU processes libvirt started for the cloud's servers; libvirtd moves them out of
# the pod's cgroup (into machine or osh-libvirt), so kill_pods does not see them.
kill_vms() {
  local p cg pids=()
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/exe" 2>/dev/null) == */qemu-system-* ]] || continue
    cg=$(<"$p/cgroup") 2>/dev/null || continue
    [[ $cg == *machine* || $cg == *osh-libvirt* || $cg == *kubepods* ]] && pids+=("${p#/proc/}")
  done
  ((${#pids[@]})) || return 0
  log "stopping ${#pids[@]} QEMU processes of the cloud's servers"
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

# cloud_leftovers: what the cloud's agents made on the host, when the record says it is new:
# network namespaces (neutron's qrouter-/qdhcp-), links (OVS's ovs-netdev, br-ex, br-int, the
# agents' veths and taps), the charts' host paths, libvirt's cgroups, devices' modes, and /'s
# propagation.
cloud_leftovers() {
  [[ -f $HOST/done ]] || return 0
  local n l p
  if [[ -f $HOST/netns ]]; then
    for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do
      grep -qxF "$n" "$HOST/netns" && continue
      [[ $n == cni-* ]] && continue # the CNI's, handled with the pods
      ip netns delete "$n" 2>/dev/null && log "deleted network namespace $n"
    done
  fi
  for l in $(ip -o link | awk -F': ' '{print $2}' | cut -d@ -f1); do
    [[ $l == "$BRIDGE" ]] && continue
    grep -qxF "$l" "$HOST/links" && continue
    # Only the kinds Open vSwitch and the agents create: another program's new link stays.
    [[ $l =~ ^(ovs-netdev|ovs-system|br-ex|br-int|br-tun|tap.*|qr-.*|qg-.*|qvo.*|qvb.*|ns-.*|vxlan_sys_.*|veth.*)$ ]] || continue
    ip link del "$l" 2>/dev/null && log "deleted link $l"
  done
  if [[ -f $HOST/chart-paths ]]; then
    for p in "${CHART_PATHS[@]}"; do
      [[ -e $p ]] || continue
      grep -qxF "$p" "$HOST/chart-paths" && continue
      rm -rf --one-file-system "$p" && log "removed $p (created by the charts)"
    done
  fi
  restore_chart_trees
  for p in /sys/fs/cgroup/*/osh-libvirt /sys/fs/cgroup/*/machine /sys/fs/cgroup/*/machine.slice; do
    [[ -d $p ]] || continue
    grep -qxF "$p" "$HOST/vm-cgroups" 2>/dev/null && continue
    find "$p" -depth -type d -exec rmdir {} \; 2>/dev/null || log "  cgroup $p not empty: left"
  done
  local mode uid gid dev
  [[ -f $HOST/devices ]] && while read -r mode uid gid dev; do
    [[ $(stat -c '%a %u %g' "$dev") == "$mode $uid $gid" ]] && continue
    chmod "$mode" "$dev" && chown "$uid:$gid" "$dev" && log "restored the mode and owner of $dev"
  done <"$HOST/devices"
  if [[ $(cat "$HOST/root-propagation" 2>/dev/null) == private ]] &&
    awk '$5 == "/" && $7 ~ /^shared:/ {f=1} END {exit !f}' /proc/self/mountinfo; then
    mount --make-private / && log "/ is a private mount again"
  fi
}

# restore_chart_trees: the pre-existing data paths of the charts as `up` recorded them (see
# CHART_DATA_PATHS): what was added goes, with its content; what was there gets its owner, group
# and mode back (the content of a file that was there is the packages' and stays).
restore_chart_trees() {
  [[ -f $HOST/chart-trees ]] || return 0
  local -A recorded=()
  local uid gid mode p
  while read -r uid gid mode p; do recorded[$p]="$uid $gid $mode"; done <"$HOST/chart-trees"
  local added=0
  while IFS= read -r -d '' p; do
    # Only the top of an added subtree: the rest goes with it.
    [[ -n ${recorded[$p]:-} || -z ${recorded[${p%/*}]:-} ]] && continue
    rm -rf --one-file-system "$p" && added=$((added + 1))
  done < <(for p in "${CHART_DATA_PATHS[@]}"; do
    [[ -n ${recorded[$p]:-} ]] && find "$p" -xdev -mindepth 1 -print0 2>/dev/null; done)
  ((added == 0)) || log "removed $added entries the cloud added to the host's data paths (${CHART_DATA_PATHS[*]})"
  local restored=0
  for p in "${!recorded[@]}"; do
    [[ -e $p && ! -L $p ]] || continue
    read -r uid gid mode <<<"${recorded[$p]}"
    [[ $(stat -c '%u %g %a' "$p") == "$uid $gid $mode" ]] && continue
    chown "$uid:$gid" "$p" && chmod "$mode" "$p" && restored=$((restored + 1))
  done
  ((restored == 0)) || log "gave $restored entries of the host's data paths their owner and mode back"
}

# host_paths: the cluster's entries in the host paths outside its state directory (network
# namespaces, CNI results, log links, the kubelet's device-plugin socket), then each path that did
# not exist before `up` once it is empty. Other containerd or CNI users may share them: only our
# entries go, and a path that is not empty stays.
host_paths() {
  local p
  for p in /run/netns/cni-*; do
    [[ -f $p ]] && ! mountpoint -q "$p" && rm -f "$p"
  done
  rm -f /var/lib/cni/results/kupenstack-* /var/lib/kubelet/device-plugins/kubelet.sock
  [[ -d /var/log/containers ]] && find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete
  # Without the record (a second `down`), which paths are new is unknown: leave them all.
  [[ -f $HOST/done ]] || return 0
  for p in "${HOST_PATHS[@]}"; do
    [[ -d $p ]] || continue
    grep -qxF "$p" "$HOST/paths" && continue
    find "$p" -depth -type d -empty -delete
    if [[ -e $p ]]; then log "  $p is not empty (not only the cluster's): left"; else log "removed $p"; fi
  done
  return 0
}

# unmount: every mount below the cluster's mount points that was not there before, deepest first.
unmount() {
  local m prefix n=0 found prefixes=("${MOUNT_PREFIXES[@]}")
  [[ -f $HOST/done ]] || prefixes=("$STATE/") # without the record only the state directory is surely ours
  while read -r m; do
    found=
    for prefix in "${prefixes[@]}"; do [[ $m == "$prefix"* ]] && found=1; done
    [[ -n $found ]] || continue
    grep -qxF "$m" "$HOST/mounts" 2>/dev/null && continue
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "  could not unmount $m"
    n=$((n + 1))
  done < <(awk '{print $5}' /proc/self/mountinfo | sed 's/\\040/ /g' | sort -r)
  ((n == 0)) || log "unmounted $n mounts of pods and containerd"
}

status() {
  local c
  for c in containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
    if running "$c"; then echo "$c: running ($(<"$RUN/$c.pid"))"; else echo "$c: stopped"; fi
  done
  if running kube-apiserver; then
    kubectl get nodes -o wide 2>/dev/null || true
    kubectl get pods -A 2>/dev/null || true
    echo "export KUBECONFIG=$KC"
  fi
}

case ${1:-} in
  up | down | status) "$1" ;;
  deps) LOGS=/tmp deps ;;
  ctr) shift; ctr "$@" ;;
  *) echo "usage: $0 up|down|status|deps|ctr ARGS..." >&2; exit 2 ;;
esac
