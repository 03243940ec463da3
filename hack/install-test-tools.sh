#!/usr/bin/env bash
# Builds the Kubernetes test binaries from the Go module proxy (no release downloads are
# reachable from our machines) and links them into ./bin as <tool>-<version>.
#
#   hack/install-test-tools.sh [group...]     groups: envtest (default), cluster, node, helm, codegen, all
#
#   envtest  kube-apiserver, kubectl, etcd, kube-controller-manager (namespace deletion and garbage
#            collection in e2e) + bin/envtest-<k8s version>/ (KUBEBUILDER_ASSETS)
#   cluster  envtest + kube-scheduler, kwok, bin/kwok-stages-<version>.yaml, also linked into
#            bin/envtest-<k8s version>/: simulated nodes (testenv.WithCluster, hack/local-cluster.sh)
#   node     envtest + kube-scheduler, kubelet, kube-proxy, a minimal CoreDNS and a pause program, also
#            linked into bin/envtest-<k8s version>/: a real one-node cluster (hack/real-cluster.sh)
#   helm     helm
#   codegen  controller-gen
#
# Built binaries are kept in $KUPENSTACK_CACHE/bin (default ~/.cache/kupenstack/bin), keyed by
# version (CoreDNS and pause also by a hash of their source recipe below), so a fresh clone on
# the same machine links them in well under a second; a cold build of everything takes about
# 12 minutes on 2 cores (compile-bound), the node group about 5 more. Two runs at once do not
# build the same thing twice: the second waits for the first (a lock on the cache directory).
set -Eeuo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.2}   # k8s.io/kubernetes; staging modules k8s.io/* at v0.37.2
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}  # go.etcd.io/etcd/server/v3
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}  # sigs.k8s.io/kwok
HELM_VERSION=${HELM_VERSION:-v3.22.0} # helm.sh/helm/v3
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0} # github.com/coredns/coredns
CONTROLLER_GEN_VERSION=${CONTROLLER_GEN_VERSION:-v0.23.0} # sigs.k8s.io/controller-tools
K8S_MINOR=${K8S_VERSION#v1.}; K8S_MINOR=${K8S_MINOR%%.*}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN_DIR:-$ROOT/bin}
CACHE=${KUPENSTACK_CACHE:-$HOME/.cache/kupenstack}/bin
mkdir -p "$BIN" "$CACHE"
WORK=$(mktemp -d)
NEW=$(mktemp -d "$CACHE/.new.XXXXXX") # builds land here, then move into CACHE atomically
trap 'rm -rf "$WORK" "$NEW"' EXIT
export CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod

log() { printf '[install-test-tools %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
trap 'die "failed at line $LINENO: $BASH_COMMAND"' ERR
command -v go >/dev/null || die "go not found in PATH"
# One build at a time per cache: a second run (another clone, make target or test) waits, then
# finds the binaries the first one built instead of compiling them again.
exec {LOCK}>"$CACHE/.lock"
if ! flock -n "$LOCK"; then
  log "another install-test-tools.sh is building into $CACHE: waiting for it"
  flock "$LOCK"
fi

# cached NAME: the versioned binary is already built.
cached() { [[ -x $CACHE/$1 ]]; }
# publish NAME...: move fresh builds from NEW into CACHE under their versioned names.
publish() { local n; for n in "$@"; do mv -f "$NEW/${n%-v*}" "$CACHE/$n"; log "  built $n"; done; }
# link NAME: make bin/NAME point at the cached build (hard link when possible, else copy).
link() {
  [[ $BIN/$1 -ef $CACHE/$1 ]] && return
  ln -f "$CACHE/$1" "$BIN/$1" 2>/dev/null || cp -f "$CACHE/$1" "$BIN/$1"
}
modinfo() { (cd "$WORK" && go mod download -json "$1") | sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",*\$/\1/p"; }
scratch_module() { rm -rf "${WORK:?}/$1" && mkdir -p "$WORK/$1" && cd "$WORK/$1" && go mod init "local/$1" >/dev/null 2>&1; }

# build_kubernetes CMD...: k8s.io/kubernetes has replace directives for its staging modules,
# so `go install m@v` refuses it; build inside a scratch module that points each v0.0.0
# staging requirement at the published v0.X.Y tag.
build_kubernetes() {
  local todo=() c gomod m ld pkg
  for c in "$@"; do cached "$c-$K8S_VERSION" || todo+=("$c"); done
  ((${#todo[@]})) || return 0
  log "kubernetes $K8S_VERSION: building ${todo[*]} (minutes when the Go build cache is cold)"
  (
    scratch_module k8s
    go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
    gomod=$(modinfo "k8s.io/kubernetes@$K8S_VERSION" GoMod)
    [[ -f $gomod ]] || die "could not download k8s.io/kubernetes@$K8S_VERSION"
    for m in $(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod"); do
      go mod edit -replace="$m=$m@v0.${K8S_VERSION#v1.}"
    done
    go get $(printf "k8s.io/kubernetes/cmd/%s@$K8S_VERSION " "${todo[@]}")
    ld="-s -w" # version stamping as in kubernetes' hack/lib/version.sh; without it discovery says v0.0.0
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$K8S_MINOR -X $pkg.gitTreeState=clean"
    done
    go build -trimpath -ldflags "$ld" -o "$NEW/" $(printf 'k8s.io/kubernetes/cmd/%s ' "${todo[@]}")
  )
  publish $(printf "%s-$K8S_VERSION " "${todo[@]}")
}

build_etcd() {
  cached "etcd-$ETCD_VERSION" && return 0
  log "etcd $ETCD_VERSION: building"
  # The module root is etcd's main package; its replace directives also rule out `go install`.
  (scratch_module etcd && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" &&
    go build -trimpath -ldflags "-s -w" -o "$NEW/etcd" go.etcd.io/etcd/server/v3)
  publish "etcd-$ETCD_VERSION"
}

go_install() { # go_install NAME VERSION PACKAGE LDFLAGS
  cached "$1-$2" && return 0
  log "$3@$2: building"
  (cd "$WORK" && GOBIN="$NEW" go install -trimpath -ldflags "$4" "$3@$2")
  publish "$1-$2"
}

kwok_stages() { # standalone kwok needs Stage objects; use kwok's own defaults from its module source
  local out=$CACHE/kwok-stages-$KWOK_VERSION.yaml src f
  if [[ ! -s $out ]]; then
    src=$(modinfo "sigs.k8s.io/kwok@$KWOK_VERSION" Dir)/kustomize/stage
    { echo "# kwok $KWOK_VERSION default stages, for kwok --config"
      for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
        pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do echo ---; cat "$src/$f.yaml"; done
    } >"$out.tmp" && mv "$out.tmp" "$out"
  fi
  link "kwok-stages-$KWOK_VERSION.yaml"
}

# The minimal CoreDNS of the real cluster: only the plugins that serve cluster.local from the
# API server (no forward, no cloud DNS providers), so a pod's lookup never leaves the cluster.
COREDNS_MAIN='package main

import (
	_ "github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() { coremain.Run() }
'
# The pod sandbox process (what registry.k8s.io/pause is, which cannot be pulled here): sleeps
# until SIGINT/SIGTERM and, as PID 1 of a pod sharing its process namespace, reaps orphans.
PAUSE_MAIN='package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range c {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
'
recipe_hash() { printf '%s' "$*" | sha256sum | cut -c1-12; }
COREDNS_NAME=coredns-$COREDNS_VERSION-$(recipe_hash "$COREDNS_VERSION" "$COREDNS_MAIN")
PAUSE_NAME=pause-$(recipe_hash "$PAUSE_MAIN")

# build_main NAME MAIN [MODULE@VERSION]: a one-file main package in a scratch module.
build_main() {
  cached "$1" && return 0
  log "$1: building${3:+ with $3}"
  (scratch_module "$1" && printf '%s' "$2" >main.go && { [[ -z ${3:-} ]] || go get "$3"; } &&
    go build -trimpath -ldflags "-s -w" -o "$NEW/$1")
  mv -f "$NEW/$1" "$CACHE/$1"; log "  built $1"
}

helm_ldflags() {
  local ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" pkg
  for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    ld+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$K8S_MINOR"
  done
  echo "$ld"
}

envtest() {
  # kube-scheduler too: cluster needs it, and one go build of all four shares the compile work;
  # likewise the node's two when node is asked for as well.
  build_kubernetes kube-apiserver kubectl kube-controller-manager kube-scheduler ${WANT_NODE:+kubelet kube-proxy}
  build_etcd
  local assets=$BIN/envtest-$K8S_VERSION n
  mkdir -p "$assets"
  for n in kube-apiserver-$K8S_VERSION kubectl-$K8S_VERSION kube-controller-manager-$K8S_VERSION etcd-$ETCD_VERSION; do
    link "$n"
    ln -sfn "../$n" "$assets/${n%-v*}" # envtest wants the plain names in one directory
  done
}

cluster() {
  envtest
  go_install kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok "-s -w"
  link "kube-scheduler-$K8S_VERSION"; link "kwok-$KWOK_VERSION"
  kwok_stages
  # testenv's WithCluster finds them next to the envtest binaries, under plain names.
  local assets=$BIN/envtest-$K8S_VERSION
  ln -sfn "../kube-scheduler-$K8S_VERSION" "$assets/kube-scheduler"
  ln -sfn "../kwok-$KWOK_VERSION" "$assets/kwok"
  ln -sfn "../kwok-stages-$KWOK_VERSION.yaml" "$assets/kwok-stages.yaml"
}

node() {
  build_kubernetes kubelet kube-proxy
  build_main "$COREDNS_NAME" "$COREDNS_MAIN" "github.com/coredns/coredns@$COREDNS_VERSION"
  build_main "$PAUSE_NAME" "$PAUSE_MAIN"
  envtest
  local assets=$BIN/envtest-$K8S_VERSION pair
  for pair in kube-scheduler=kube-scheduler-$K8S_VERSION kubelet=kubelet-$K8S_VERSION \
    kube-proxy=kube-proxy-$K8S_VERSION "coredns=$COREDNS_NAME" "pause=$PAUSE_NAME"; do
    link "${pair#*=}"
    ln -sfn "../${pair#*=}" "$assets/${pair%%=*}" # plain names, as hack/real-cluster.sh expects
  done
}

helm() {
  go_install helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "$(helm_ldflags)"
  link "helm-$HELM_VERSION"
}

codegen() {
  go_install controller-gen "$CONTROLLER_GEN_VERSION" sigs.k8s.io/controller-tools/cmd/controller-gen "-s -w"
  link "controller-gen-$CONTROLLER_GEN_VERSION"
}

(($#)) || set -- envtest
WANT_NODE=; [[ " $* " == *" node "* || " $* " == *" all "* ]] && WANT_NODE=1
for group in "$@"; do
  case $group in
    envtest | cluster | node | helm | codegen) "$group" ;;
    all) cluster; node; helm; codegen ;;
    *) die "unknown group '$group' (envtest, cluster, node, helm, codegen, all)" ;;
  esac
done
log "ready in $BIN: $*"
