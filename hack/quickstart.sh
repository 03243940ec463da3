#!/usr/bin/env bash
# The simulated quickstart (`make quickstart-sim` / `make quickstart-sim-down`); the real one is hack/quickstart-real.sh:
#
#   hack/quickstart.sh up|down|status
#
# `up` brings up, one progress line a step: the test binaries (cached in ~/.cache/kupenstack),
# the OpenStack all-in-one (hack/openstack-aio), a local Kubernetes cluster whose nodes kwok
# simulates (hack/local-cluster.sh), the CRDs, the credentials Secret, the operator as a local
# process (there is no container runtime), the cloud life-cycle samples (config/samples/quickstart)
# and the resource samples (config/samples), then waits until everything is Ready. Every step is
# idempotent, so a second `up` only checks and is quick. A failing step is named with its log.
#
# `down` deletes the sample namespace first (its OpenStack resources go with it, so nothing is
# left in the all-in-one), then stops the operator and the cluster: only processes this script
# started, by pid file and executable path. The all-in-one keeps running (other work may use it)
# unless AIO=stop.
#
# Settings (environment):
#   QUICKSTART_STATE_DIR  logs, pid files, ports, the cluster's state (default
#                         /var/lib/kupenstack/quickstart as root, else ~/.local/state/kupenstack/quickstart)
#   CLUSTER_API_PORT      kube-apiserver of the quickstart's cluster (default 17443); etcd uses
#                         CLUSTER_ETCD_PORT (default 13379) and the port after it. They differ from
#                         `make cluster-up`'s so that both clusters can run side by side.
#   WAIT_TIMEOUT          how long to wait for the cloud and for the samples (default 15m)
#   AIO=stop              `down` also stops the all-in-one
set -Eeuo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2} # as in the Makefile
TOOLS=$ROOT/bin/envtest-$K8S_VERSION
AIO_STATE_DIR=${AIO_STATE_DIR:-/var/lib/kupenstack/openstack-aio}
if [[ $EUID -eq 0 ]]; then default_state=/var/lib/kupenstack/quickstart
else default_state=${XDG_STATE_HOME:-$HOME/.local/state}/kupenstack/quickstart; fi
STATE=${QUICKSTART_STATE_DIR:-$default_state}
LOGS=$STATE/logs
export CLUSTER_STATE_DIR=$STATE/cluster
export CLUSTER_API_PORT=${CLUSTER_API_PORT:-17443} CLUSTER_ETCD_PORT=${CLUSTER_ETCD_PORT:-13379}
# Named like the nodes of config/samples/quickstart/cloud.yaml.
export NODES="control-0 compute-0 compute-1"
KC=$CLUSTER_STATE_DIR/kubeconfig
OPERATOR=$ROOT/bin/kupenstack
WAIT_TIMEOUT=${WAIT_TIMEOUT:-15m}
SAMPLES_NS=demo
# The resource kinds of config/samples, waited for one kind at a time.
SAMPLE_KINDS=(networks subnets routers securitygroups ports floatingips keypairs images volumes virtualmachines virtualmachinesets)

kubectl() { "$TOOLS/kubectl" --kubeconfig "$KC" --cache-dir "$STATE/kube-cache" "$@"; }

STEP_PREFIX=quickstart
STEP_RETRY="Fix the cause and run 'make quickstart-sim' again (it resumes), or 'make quickstart-sim-down'."
# shellcheck source=lib/steps.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"

# operator_exe: the executable of the pid file's process, as the kernel names it: a binary that
# was replaced since the process started (go build removes and re-creates bin/kupenstack) reads
# "<path> (deleted)".
operator_exe() {
  [[ -f $STATE/kupenstack.pid ]] && readlink "/proc/$(<"$STATE/kupenstack.pid")/exe" 2>/dev/null
}

# operator_running: the process of the pid file is a quickstart operator: bin/kupenstack of this
# checkout or of another one sharing the state directory, possibly rebuilt since it started. A
# rebuilt binary must count: otherwise `up` would start a second operator beside it (and `down`
# leave it running), and two operators without a leader reconcile every object twice, creating
# two servers for one VM, one of which nobody deletes.
operator_running() {
  local exe
  exe=$(operator_exe) || return 1
  exe=${exe% (deleted)}
  [[ $exe == */bin/kupenstack ]]
}

# operator_current: the running operator is this checkout's binary as it is now.
operator_current() {
  [[ $(operator_exe) == "$(readlink -f "$OPERATOR")" ]] && [[ ! $OPERATOR -nt $STATE/kupenstack.pid ]]
}

port_free() { ! ss -Hltn "sport = :$1" | grep -q .; }

# free_port FROM: the first port from FROM that nothing listens on.
free_port() {
  local p=$1
  until port_free "$p"; do p=$((p + 1)); done
  echo "$p"
}

tools() { "$ROOT/hack/install-test-tools.sh" envtest cluster; }

openstack() { "$ROOT/hack/openstack-aio/up.sh"; }

cluster() { TOOLS=$TOOLS "$ROOT/hack/local-cluster.sh" up; }

crds() { kubectl apply --server-side --force-conflicts -f "$ROOT/config/crd/bases"; }

# The operator's only OpenStack credentials: the all-in-one's admin (cloud "aio"). Created before
# the operator starts, without KupenStack's published-by annotation, so the life-cycle never
# replaces it with the credentials of the simulated cloud it deploys.
credentials() {
  kubectl create namespace kupenstack-system --dry-run=client -o yaml | kubectl apply -f -
  kubectl -n kupenstack-system create secret generic kupenstack-cloud \
    --from-file=clouds.yaml="$AIO_STATE_DIR/clouds.yaml" --dry-run=client -o yaml | kubectl apply -f -
}

# build: only when a Go file or go.mod changed since the last build (a re-run skips the link).
build() {
  if [[ -x $OPERATOR ]] && [[ -z $(find "$ROOT/cmd" "$ROOT/internal" "$ROOT/api" "$ROOT/go.mod" "$ROOT/go.sum" \
    -newer "$OPERATOR" \( -name '*.go' -o -name 'go.*' \) -print -quit) ]]; then
    echo "bin/kupenstack is up to date"
    return
  fi
  cd "$ROOT" && go build -o "$OPERATOR" ./cmd/kupenstack
}

# operator: started once; restarted when the binary changed since (or another checkout's runs).
operator() {
  if operator_running; then
    if operator_current; then echo "operator running"; else stop_operator; fi
  fi
  if ! operator_running; then
    local metrics probe
    metrics=$(free_port 18080)
    probe=$(free_port $((metrics + 1)))
    echo "$probe" >"$STATE/probe-port"
    echo "starting the operator: metrics on 127.0.0.1:$metrics, probes on 127.0.0.1:$probe"
    # Leader election: should a second operator ever run against this cluster (started by hand,
    # or by an older quickstart), it waits instead of reconciling every object a second time.
    KUBECONFIG=$KC setsid "$OPERATOR" --cloud aio --lcm on \
      --leader-elect --leader-election-namespace kupenstack-system \
      --notifications-url amqp://guest:guest@127.0.0.1:5672/ \
      --metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "127.0.0.1:$probe" \
      --chart-cache-dir "$STATE/chart-cache" --chart-local-path-prefixes "$(chart_dirs)" \
      >>"$LOGS/operator.log" 2>&1 </dev/null &
    echo $! >"$STATE/kupenstack.pid"
  fi
  wait_until 120 curl -fsS "http://127.0.0.1:$(<"$STATE/probe-port")/readyz"
  operator_running
}

# chart_dirs: the directories cloud() may name as the sample's charts.localPath, which the
# operator must allow (--chart-local-path-prefixes): the real charts beside the checkout
# (OSH_CHARTS) and the checkout's fixture charts.
chart_dirs() {
  local osh=${OSH_CHARTS:-$ROOT/../shared/openstack-helm/2026.1.0}
  [[ -d $osh ]] && osh=$(cd "$osh" && pwd)
  echo "$osh,$ROOT/test/fixtures/charts"
}

# cloud: the life-cycle samples with the real OpenStack-Helm charts of the sample's release
# (OSH_CHARTS: a directory of packaged charts, by default ../shared/openstack-helm/2026.1.0 beside
# the checkout; without it, the checkout's fixture charts stand in); Ready once every component's
# Helm release is installed and its (simulated) workloads are ready.
cloud() {
  local charts=${OSH_CHARTS:-$ROOT/../shared/openstack-helm/2026.1.0}
  if [[ ! -f $charts/index.yaml ]]; then
    echo "no OpenStack-Helm chart repository at $charts: using the fixture charts" >&2
    charts=$ROOT/test/fixtures/charts
  fi
  charts=$(cd "$charts" && pwd)
  sed "s|^\(\s*localPath:\).*|\1 $charts|" "$ROOT/config/samples/quickstart/cloud.yaml" |
    kubectl apply --server-side -f -
  kubectl wait --for condition=Ready --timeout "$WAIT_TIMEOUT" ksconfig/kupenstack
  kubectl get ksconfig,osnode,oscomp
}

samples() {
  kubectl apply --server-side -f "$ROOT/config/samples"
  kubectl wait --for condition=Ready --timeout 2m project/$SAMPLES_NS projectquota/$SAMPLES_NS
  kubectl wait --for condition=Ready --timeout 2m flavor --all
  local kind
  for kind in "${SAMPLE_KINDS[@]}"; do
    kubectl -n "$SAMPLES_NS" wait --for condition=Ready --timeout "$WAIT_TIMEOUT" "$kind" --all
  done
}

up() {
  mkdir -p "$LOGS"
  echo "quickstart: logs in $LOGS"
  step "test binaries (hack/install-test-tools.sh)" "$LOGS/tools.log" tools
  step "OpenStack all-in-one on 127.0.0.1 (hack/openstack-aio/up.sh)" "$LOGS/openstack.log" openstack
  step "local cluster, 3 kwok nodes (hack/local-cluster.sh)" "$LOGS/cluster.log" cluster
  step "CRDs (config/crd/bases)" "$LOGS/crds.log" crds
  step "credentials Secret kupenstack-system/kupenstack-cloud (cloud aio)" "$LOGS/credentials.log" credentials
  step "build the operator (bin/kupenstack)" "$LOGS/build.log" build
  step "operator (local process, --cloud aio, --lcm on)" "$LOGS/operator-start.log" operator
  step "cloud life-cycle: charts on the simulated nodes (config/samples/quickstart)" "$LOGS/cloud.log" cloud
  step "namespace $SAMPLES_NS: network, router, security group, key pair, image, volumes, VMs (config/samples)" \
    "$LOGS/samples.log" samples
  echo
  kubectl get openstack-admin,openstack -A
  cat <<EOF

Everything above is Ready. Real: the Kubernetes API server and controllers, the OpenStack APIs
(all-in-one on 127.0.0.1) and every OpenStack resource in namespace $SAMPLES_NS. Simulated: the
cluster's nodes and the pods of the life-cycle's Helm releases (kwok), and the all-in-one's
hypervisor and network agents (no real VM boots).

Try next:
  export KUBECONFIG=$KC        # kubectl: $TOOLS/kubectl
  kubectl -n $SAMPLES_NS scale vmset/web --replicas=3 && kubectl -n $SAMPLES_NS get vm -w
  # break a VM behind KupenStack's back and watch it heal (restart count goes up):
  OS_CLIENT_CONFIG_FILE=$AIO_STATE_DIR/clouds.yaml OS_CLOUD=aio openstack server delete \$(kubectl -n $SAMPLES_NS get vm web-0 -o jsonpath='{.status.id}')
  kubectl -n $SAMPLES_NS get vm web-0 -w
  kubectl get oscomp            # the cloud's components and their Helm releases
  kubectl delete namespace $SAMPLES_NS   # deletes every resource in OpenStack too
  make quickstart-sim-down      # AIO=stop also stops the all-in-one
Operator log: $LOGS/operator.log
EOF
}

# stop_operator: SIGTERM, up to 30 s to exit, then SIGKILL.
stop_operator() {
  operator_running || return 0
  local pid i
  pid=$(<"$STATE/kupenstack.pid")
  echo "stopping the operator (pid $pid)"
  kill "$pid"
  for ((i = 0; i < 60; i++)); do operator_running || return 0; sleep 0.5; done
  kill -9 "$pid"
}

# clean_samples: the sample namespace's OpenStack resources are deleted by the operator, so it
# must still run; a namespace that does not go in time is reported, not forced (force would leak).
clean_samples() {
  if ! kubectl get --raw /readyz >/dev/null 2>&1; then echo "cluster not running"; return; fi
  if ! operator_running; then
    echo "the operator is not running: start it again with 'make quickstart-sim' to delete the samples' OpenStack resources"
    return 1
  fi
  kubectl delete namespace "$SAMPLES_NS" --ignore-not-found --timeout "$WAIT_TIMEOUT"
  kubectl delete -f "$ROOT/config/samples" --ignore-not-found --timeout 2m
}

operator_down() { stop_operator; }

cluster_down() { TOOLS=$TOOLS "$ROOT/hack/local-cluster.sh" down; }

openstack_down() { "$ROOT/hack/openstack-aio/stop.sh"; }

down() {
  if [[ ! -d $STATE ]]; then echo "quickstart: nothing in $STATE"; [[ ${AIO:-} != stop ]] && return; fi
  mkdir -p "$LOGS"
  step "delete namespace $SAMPLES_NS and its OpenStack resources" "$LOGS/down.log" clean_samples
  step "stop the operator" "$LOGS/down.log" operator_down
  step "stop the local cluster" "$LOGS/down.log" cluster_down
  if [[ ${AIO:-} == stop ]]; then
    step "stop the OpenStack all-in-one" "$LOGS/down.log" openstack_down
  fi
  rm -rf "$STATE"
  echo "quickstart: down${AIO:+ (AIO=$AIO)}; the all-in-one $([[ ${AIO:-} == stop ]] && echo stopped || echo 'keeps running (AIO=stop stops it)')"
}

status() {
  if operator_running; then echo "operator running (pid $(<"$STATE/kupenstack.pid"), log $LOGS/operator.log)"
  else echo "operator NOT running"; fi
  TOOLS=$TOOLS "$ROOT/hack/local-cluster.sh" status || true
  if kubectl get --raw /readyz >/dev/null 2>&1; then kubectl get openstack-admin,openstack -A; fi
}

# Sourced (test/quickstart does, to test the operator's start and stop): functions only.
[[ ${BASH_SOURCE[0]} != "$0" ]] && return 0

case ${1:-} in
  up | down | status) "$1" ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
