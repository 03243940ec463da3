#!/usr/bin/env bash
# A local Kubernetes cluster with simulated nodes, on 127.0.0.1 only, for the quickstart and
# for trying the operator by hand:
#
#   hack/local-cluster.sh up|down|status
#
# etcd, kube-apiserver, kube-controller-manager (all default controllers), kube-scheduler and
# kwok, which plays the kubelet of every node: pods bound to a node become Running and Ready,
# pods of Jobs then Succeeded. Nothing runs in a container. The binaries come from
# bin/envtest-<k8s version>/ (hack/install-test-tools.sh envtest cluster; `make cluster-up` runs it).
#
# Settings (environment):
#   CLUSTER_STATE_DIR  certificates, token, etcd data, logs, pid files and the kubeconfig
#                      (default /var/lib/kupenstack/local-cluster as root, else
#                      ~/.local/state/kupenstack/local-cluster); `down` deletes it
#   NODES              a count (nodes node-0..node-N-1, default 1), or names with labels:
#                      "control-0:openstack-control-plane=enabled worker-0:openstack-compute-node=enabled,x=y"
#   NODE_LABELS        labels for every node, "k=v,k2=v2"
#   CLUSTER_API_PORT   kube-apiserver (default 16443); etcd uses CLUSTER_ETCD_PORT (default 12379) and
#                      the port after it. Nothing else listens.
#
# `up` is idempotent: it starts what is not running and creates or updates the nodes (nodes
# dropped from NODES are left alone); settings not given again are those of the last `up`. `down` stops only the processes it started, checked by
# pid file and executable path.
#
# Every address is loopback, the simulated node and pod IPs and service ClusterIPs too, so
# nothing the API server might dial (webhooks, kubectl logs/exec, proxying) leaves the machine.
# The price: EndpointSlices refuse loopback addresses, so Services get no endpoints.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2} # as in the Makefile and install-test-tools.sh
TOOLS=${TOOLS:-$ROOT/bin/envtest-$K8S_VERSION}
if [[ $EUID -eq 0 ]]; then default_state=/var/lib/kupenstack/local-cluster
else default_state=${XDG_STATE_HOME:-$HOME/.local/state}/kupenstack/local-cluster; fi
STATE=${CLUSTER_STATE_DIR:-$default_state}
# The settings of the first `up` stay the defaults of the next ones (a bare `up` changes nothing).
SETTINGS=$STATE/settings
if [[ -f $SETTINGS ]]; then
  while IFS='=' read -r key value; do [[ -v $key ]] || declare "$key=$value"; done <"$SETTINGS"
fi
NODES=${NODES:-1}
NODE_LABELS=${NODE_LABELS:-}
ETCD_PORT=${CLUSTER_ETCD_PORT:-12379}
API_PORT=${CLUSTER_API_PORT:-16443}
SERVICE_CIDR=127.0.96.0/20
POD_CIDR=127.1.0.1/16 # kwok hands out pod IPs from here
KC=$STATE/kubeconfig
MARKER=$STATE/.kupenstack-local-cluster # `down` deletes only a directory that carries it

log() { printf '[local-cluster %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
trap 'die "failed at line $LINENO: $BASH_COMMAND"' ERR
kubectl() { "$TOOLS/kubectl" --kubeconfig "$KC" --cache-dir "$STATE/kube-cache" "$@"; }

# running NAME: the process in NAME.pid is still our binary (a pid can be reused).
running() {
  local f=$STATE/$1.pid
  [[ -f $f ]] && [[ $(readlink "/proc/$(<"$f")/exe" 2>/dev/null) == "$(readlink -f "$TOOLS/$1")" ]]
}

# start NAME ARGS...: run the binary in a session of its own (it outlives this script).
start() {
  local name=$1; shift
  if running "$name"; then log "$name already running"; return; fi
  log "starting $name (log: $STATE/$name.log)"
  setsid "$TOOLS/$name" "$@" >>"$STATE/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/$name.pid"
}

# wait_for WHAT SECONDS CMD...: a bound for a broken start, not a performance target.
wait_for() {
  local what=$1 secs=$2 i; shift 2
  for ((i = 0; i < secs * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  die "$what not ready after ${secs}s: see $STATE/*.log; '$0 down' cleans up"
}

port_free() { ! ss -Hltn "sport = :$1" | grep -q .; }

pki() {
  [[ -f $STATE/tokens.csv ]] && return
  log "creating a CA, the API server's certificate, the service-account key and an admin token"
  local svc_ip=${SERVICE_CIDR%.*/*}.1
  (
    cd "$STATE"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=kupenstack-local-cluster-ca -addext keyUsage=critical,digitalSignature,keyCertSign,cRLSign \
      -keyout ca.key -out ca.crt
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=kube-apiserver \
      -CA ca.crt -CAkey ca.key -keyout apiserver.key -out apiserver.crt \
      -addext "subjectAltName=IP:127.0.0.1,IP:$svc_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    openssl genrsa -out sa.key 2048
    openssl rsa -in sa.key -pubout -out sa.pub
    # Static token of a cluster admin: the control-plane processes and the kubeconfig use it.
    echo "$(openssl rand -hex 24),admin,admin,system:masters" >tokens.csv.new && mv tokens.csv.new tokens.csv
  ) 2>/dev/null
  chmod 600 "$STATE"/*.key "$STATE/tokens.csv"
  kubectl config set-cluster local --server "https://127.0.0.1:$API_PORT" \
    --certificate-authority "$STATE/ca.crt" --embed-certs >/dev/null
  kubectl config set-credentials admin --token "$(cut -d, -f1 "$STATE/tokens.csv")" >/dev/null
  kubectl config set-context local --cluster local --user admin >/dev/null
  kubectl config use-context local >/dev/null
}

# node_manifests: one Node per entry of NODES, in YAML.
node_manifests() {
  local entries=() entry name labels i kv
  if [[ $NODES =~ ^[0-9]+$ ]]; then
    for ((i = 0; i < NODES; i++)); do entries+=("node-$i"); done
  else
    read -ra entries <<<"$NODES"
  fi
  for entry in "${entries[@]}"; do
    name=${entry%%:*}
    labels=$NODE_LABELS
    [[ $entry == *:* ]] && labels+=${labels:+,}${entry#*:}
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations: {node.alpha.kubernetes.io/ttl: "0", kwok.x-k8s.io/node: fake}
  labels:
    type: kwok
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
EOF
    IFS=, read -ra kv <<<"$labels"
    for i in "${kv[@]}"; do
      [[ $i == *=* ]] || die "node label '$i' is not key=value"
      printf '    %s: "%s"\n' "${i%%=*}" "${i#*=}"
    done
    cat <<EOF
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
EOF
  done
}

untainted() {
  local keys
  keys=$(kubectl get nodes -o jsonpath='{.items[*].spec.taints[*].key}') && [[ $keys != *not-ready* ]]
}

up() {
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl; do
    [[ -x $TOOLS/$b ]] || die "$TOOLS/$b missing: run hack/install-test-tools.sh envtest cluster"
  done
  [[ -f $TOOLS/kwok-stages.yaml ]] || die "$TOOLS/kwok-stages.yaml missing: run hack/install-test-tools.sh cluster"
  mkdir -p "$STATE" && chmod 700 "$STATE" && touch "$MARKER"
  if ! running etcd && ! { port_free "$ETCD_PORT" && port_free $((ETCD_PORT + 1)); }; then
    die "port $ETCD_PORT or $((ETCD_PORT + 1)) in use (another cluster?): set CLUSTER_ETCD_PORT"
  fi
  if ! running kube-apiserver && ! port_free "$API_PORT"; then
    die "port $API_PORT in use (another cluster?): set CLUSTER_API_PORT"
  fi
  printf '%s\n' "NODES=$NODES" "NODE_LABELS=$NODE_LABELS" "CLUSTER_ETCD_PORT=$ETCD_PORT" \
    "CLUSTER_API_PORT=$API_PORT" >"$SETTINGS"
  pki
  start etcd --name local --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "local=http://127.0.0.1:$((ETCD_PORT + 1))"
  # --endpoint-reconciler-type none: the default one refuses a loopback advertise address.
  start kube-apiserver --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
    --tls-cert-file "$STATE/apiserver.crt" --tls-private-key-file "$STATE/apiserver.key" \
    --client-ca-file "$STATE/ca.crt" --token-auth-file "$STATE/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$STATE/sa.pub" --service-account-signing-key-file "$STATE/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged --endpoint-reconciler-type none
  wait_for kube-apiserver 120 kubectl get --raw /readyz
  # --secure-port 0: no health endpoints, so no more ports to collide with another cluster.
  start kube-controller-manager --kubeconfig "$KC" --secure-port 0 --leader-elect=false \
    --service-account-private-key-file "$STATE/sa.key" --root-ca-file "$STATE/ca.crt" \
    --service-cluster-ip-range "$SERVICE_CIDR"
  start kube-scheduler --kubeconfig "$KC" --secure-port 0 --leader-elect=false
  start kwok --kubeconfig "$KC" --config "$TOOLS/kwok-stages.yaml" --manage-all-nodes \
    --node-ip 127.0.0.1 --cidr "$POD_CIDR" --node-lease-duration-seconds 40
  node_manifests | kubectl apply -f - >/dev/null
  # Ready and untainted: the node lifecycle controller lifts the not-ready taint after kwok's Ready.
  wait_for "nodes" 120 kubectl wait --for condition=Ready node --all --timeout 1s
  wait_for "nodes' not-ready taints to go" 120 untainted
  wait_for "the default service account" 120 kubectl get serviceaccount default
  status
  echo "export KUBECONFIG=$KC"
}

status() {
  local name
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler kwok; do
    if running "$name"; then log "$name running (pid $(<"$STATE/$name.pid"))"; else log "$name NOT running"; fi
  done
  if running kube-apiserver; then kubectl get nodes; fi
}

# stop NAME...: SIGTERM, up to 20 s to exit, then SIGKILL.
stop() {
  local name i left
  for name in "$@"; do running "$name" && { log "stopping $name"; kill "$(<"$STATE/$name.pid")"; }; done
  for ((i = 0; i < 40; i++)); do
    left=0
    for name in "$@"; do running "$name" && left=1; done
    ((left)) || return 0
    sleep 0.5
  done
  for name in "$@"; do running "$name" && kill -9 "$(<"$STATE/$name.pid")"; done
  return 0
}

down() {
  [[ -d $STATE ]] || { log "nothing in $STATE"; return; }
  [[ -f $MARKER ]] || die "$STATE was not made by this script; not touching it"
  stop kwok kube-scheduler kube-controller-manager kube-apiserver
  stop etcd # last: kube-apiserver hangs on shutdown once etcd is gone
  rm -rf "$STATE"
  log "down: removed $STATE"
}

case ${1:-} in
  up | down | status) "$1" ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
