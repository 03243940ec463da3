#!/usr/bin/env bash
# The quickstart on real pods (`make quickstart` / `make quickstart-down`), as root:
#
#   hack/quickstart-real.sh up|down|status
#
# `up` brings up, one progress line a step: a real one-node Kubernetes cluster on this machine
# (hack/real-cluster.sh: containerd, kubelet, kube-proxy, CoreDNS; pods on the private bridge ks0,
# 198.18.0.0/16), the OpenStack images built from Debian packages (hack/images.sh, cached in
# ~/.cache/kupenstack/images) imported into its containerd, a file server pod for the
# OpenStack-Helm charts (OSH_CHARTS) and the test guest's disk (hack/guest-image.sh), the operator
# from its own chart (charts/kupenstack) with the life-cycle on. Then the operator deploys the whole
# cloud of config/samples/lcm/one-node.yaml (mariadb, rabbitmq, memcached, keystone, glance,
# placement, nova with libvirt/QEMU, neutron with Open vSwitch's userspace datapath, horizon, and
# cinder on a one-node Ceph that runs in a pod, as an admin's own Ceph would), the
# cloud's admin declares the external network "public" (198.51.100.0/24 on the host's br-ex) as
# a ProviderNetwork (config/samples/day-one/10-external-network.yaml), and
# the demo tenant (config/samples/quickstart/real-tenant.yaml) gets its project, image, network,
# router, security group, key pair, floating IP, a volume and a VM that boots with it attached. Every step is idempotent: a
# second `up` checks and resumes. A failing step is named with its log.
#
# `down` stops the cluster (every pod, the cloud with it), removes the host address and the
# iptables rule `up` added, and leaves the host as `up` found it (hack/real-cluster.sh down).
#
# Settings (environment):
#   QUICKSTART_STATE_DIR  logs, the SSH key, the cluster's state (default /var/lib/kupenstack/quickstart-real)
#   OSH_CHARTS            the OpenStack-Helm 2025.1.0 charts as a chart repository (directory with
#                         index.yaml; default ../shared/openstack-helm/2025.1.0 beside the checkout)
#   WAIT_TIMEOUT          how long to wait for the cloud (default 45m) and for the tenant (default 15m)
#
# It cannot run beside `make test-real-cluster` (one bridge ks0, one node): stop one first.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2} # as in the Makefile
TOOLS=$ROOT/bin/envtest-$K8S_VERSION
STATE=${QUICKSTART_STATE_DIR:-/var/lib/kupenstack/quickstart-real}
LOGS=$STATE/logs
export REAL_CLUSTER_STATE_DIR=$STATE/cluster
KC=$REAL_CLUSTER_STATE_DIR/kubeconfig
OSH_CHARTS=${OSH_CHARTS:-$ROOT/../shared/openstack-helm/2025.1.0}
WAIT_TIMEOUT=${WAIT_TIMEOUT:-45m}
TENANT_TIMEOUT=${TENANT_TIMEOUT:-15m}
RELEASE=2025.1
OPERATOR_NS=kupenstack-system
FILES_NS=kupenstack-files
FILES_URL=http://files.$FILES_NS.svc.cluster.local
TENANT=demo
# What the cloud runs (cinder's volumes on a one-node Ceph in a pod: the ceph image), the operator and the
# file server (the openstack-client image's python3).
IMAGES=(kupenstack kubernetes-entrypoint openstack-client mariadb rabbitmq memcached keystone glance
  placement nova neutron openvswitch libvirt horizon cinder ceph)
CLIENT_IMAGE=kupenstack.local/openstack/openstack-client:$RELEASE-trixie
CEPH_IMAGE=kupenstack.local/openstack/ceph:$RELEASE-trixie
# The Ceph the cloud's volumes live on, as an admin brings one: KupenStack only reads its client
# configuration, in the cloud's namespace.
CEPH_NS=kupenstack-ceph
CLOUD_NS=openstack
# The admin's external network: a testing range (RFC 5737) whose gateway is the host's br-ex, the
# bridge the profile maps the physical network "external" to.
EXT_BRIDGE=br-ex
EXT_CIDR=198.51.100.0/24
EXT_HOST=198.51.100.1
NO_FORWARD=(FORWARD -i "$EXT_BRIDGE" -m comment --comment "kupenstack quickstart: guests reach nothing beyond the host" -j DROP)

STEP_PREFIX=quickstart
STEP_RETRY="Fix the cause and run 'make quickstart' again (it resumes), or 'make quickstart-down'."
# shellcheck source=lib/steps.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"

kubectl() { "$TOOLS/kubectl" --kubeconfig "$KC" --cache-dir "$STATE/kube-cache" "$@"; }
# helm: the one hack/install-test-tools.sh built (bin/helm-<version>).
helm() {
  local bins=("$ROOT"/bin/helm-v*)
  "${bins[-1]}" --kubeconfig "$KC" "$@"
}
real_cluster() { TOOLS=$TOOLS "$ROOT/hack/real-cluster.sh" "$@"; }

tools() {
  "$ROOT/hack/install-test-tools.sh" envtest node helm
  command -v ethtool >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ethtool
}

cluster() { real_cluster deps && real_cluster up; }

# images: built once (cached by recipe hash, the operator's by its Go sources too), then imported.
images() {
  "$ROOT/hack/images.sh" build "${IMAGES[@]}"
  local archive
  for archive in $("$ROOT/hack/images.sh" archives "${IMAGES[@]}"); do
    echo "import $archive"
    real_cluster ctr images import "$archive"
  done
}

guest() { "$ROOT/hack/guest-image.sh" build | tail -n 1 >"$STATE/guest.path"; }

# files: the charts and the guest's disk over HTTP from a pod (hostPath, read-only), for the
# operator's chart downloads and the demo Image's download.
files() {
  local charts guest_dir
  charts=$(cd "$OSH_CHARTS" && pwd)
  [[ -f $charts/index.yaml ]] || { echo "no chart repository at $OSH_CHARTS (index.yaml)"; return 1; }
  guest_dir=$(dirname "$(<"$STATE/guest.path")")
  kubectl create namespace "$FILES_NS" --dry-run=client -o yaml | kubectl apply -f -
  kubectl apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: files, namespace: $FILES_NS}
spec:
  selector: {matchLabels: {app: files}}
  template:
    metadata: {labels: {app: files}}
    spec:
      securityContext: {runAsNonRoot: true, runAsUser: 42424, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: files
        image: $CLIENT_IMAGE
        imagePullPolicy: Never
        command: [python3, -m, http.server, "8080", --directory, /files]
        readinessProbe: {httpGet: {path: /charts/index.yaml, port: 8080}, periodSeconds: 2}
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        volumeMounts:
        - {name: charts, mountPath: /files/charts, readOnly: true}
        - {name: guest, mountPath: /files/guest, readOnly: true}
      volumes:
      - {name: charts, hostPath: {path: $charts, type: Directory}}
      - {name: guest, hostPath: {path: $guest_dir, type: Directory}}
---
apiVersion: v1
kind: Service
metadata: {name: files, namespace: $FILES_NS}
spec:
  selector: {app: files}
  ports: [{port: 80, targetPort: 8080}]
EOF
  kubectl -n "$FILES_NS" rollout status deployment/files --timeout 3m
}

# operator: the chart with the image imported; Image downloads may reach the cluster's Service
# range (the file server), a testing range and not public.
operator() {
  kubectl create namespace "$OPERATOR_NS" --dry-run=client -o yaml | kubectl apply -f -
  kubectl label namespace "$OPERATOR_NS" --overwrite pod-security.kubernetes.io/enforce=restricted
  helm upgrade --install kupenstack "$ROOT/charts/kupenstack" --namespace "$OPERATOR_NS" --wait --timeout 5m \
    --set image.repository=kupenstack.local/kupenstack/kupenstack --set image.tag=dev --set image.pullPolicy=Never \
    --set lcm=on --set validationPeriod=30s --set-json 'extraArgs=["--image-source-allowed-cidrs=198.18.0.0/15"]'
}

# le32 N: N's four bytes, little endian.
le32() { printf "$(printf '\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"; }

# cephx_key: a new cephx secret, as ceph-authtool --gen-print-key prints it: base64 of the key's
# type (1, AES), its creation time (seconds, nanoseconds), its length and 16 random bytes.
cephx_key() {
  { printf '\001\000'; le32 "$(date +%s)"; le32 0; printf '\020\000'; head -c 16 /dev/urandom; } | base64 -w 0
}

# ceph: a one-node Ceph (monitor, manager, one BlueStore OSD on a 10 GiB sparse file in an
# emptyDir: a demo, its data goes with the pod) at its pod's address, since pods here reach no
# address of the node and the node (QEMU) reaches pods; then its client configuration under the
# charts' names, the ConfigMap ceph-etc and the Secret pvc-ceph-client-key, in the cloud's
# namespace. The key goes from Secret to Secret through a shell variable and files, never on a
# command line, and is applied server-side (no last-applied annotation holding a copy). A Ceph
# pod deleted and made again is a new, empty Ceph: cinder's pool and user are gone with the old
# one, so run `make quickstart-down` and `make quickstart` again.
ceph() {
  local ns ip key
  for ns in "$CEPH_NS" "$CLOUD_NS"; do kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f -; done
  if ! kubectl -n "$CEPH_NS" get secret ceph-admin >/dev/null 2>&1; then
    key=$(cephx_key)
    [[ ${#key} -eq 40 ]] || { echo "a cephx key of ${#key} characters, want 40"; return 1; }
    kubectl -n "$CEPH_NS" create secret generic ceph-admin --from-file=key=<(printf %s "$key")
  fi
  # A new namespace's pods are refused until its default ServiceAccount exists.
  wait_until 60 kubectl -n "$CEPH_NS" get serviceaccount default
  kubectl apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: ceph, namespace: $CEPH_NS, labels: {app: ceph}}
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: ceph
    image: $CEPH_IMAGE
    imagePullPolicy: Never
    command: [kupenstack-ceph-one-node]
    env:
    - {name: CEPH_PUBLIC_ADDR, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: CEPH_ADMIN_KEY_FILE, value: /etc/ceph-admin/key}
    - {name: CEPH_OSD_BYTES, value: "10737418240"}
    readinessProbe: {exec: {command: [test, -e, /run/ceph/kupenstack-ready]}, periodSeconds: 2}
    volumeMounts:
    - {name: state, mountPath: /var/lib/ceph}
    - {name: admin, mountPath: /etc/ceph-admin, readOnly: true}
  volumes:
  - {name: state, emptyDir: {}}
  - {name: admin, secret: {secretName: ceph-admin}}
EOF
  kubectl -n "$CEPH_NS" wait --for condition=Ready --timeout 5m pod/ceph
  ip=$(kubectl -n "$CEPH_NS" get pod ceph -o jsonpath='{.status.podIP}')
  # Ceph's parser refuses a last line without its newline.
  [[ -n $ip ]] || { echo "pod $CEPH_NS/ceph has no address"; return 1; }
  kubectl -n "$CLOUD_NS" create configmap ceph-etc --from-file=ceph.conf=<(printf '[global]\nmon_host = [v2:%s:3300]\n' "$ip") \
    --dry-run=client -o yaml | kubectl apply --server-side -f -
  key=$(kubectl -n "$CEPH_NS" get secret ceph-admin -o jsonpath='{.data.key}' | base64 -d)
  [[ ${#key} -eq 40 ]] || { echo "secret $CEPH_NS/ceph-admin holds a key of ${#key} characters, want 40"; return 1; }
  kubectl -n "$CLOUD_NS" create secret generic pvc-ceph-client-key --from-file=key=<(printf %s "$key") \
    --dry-run=client -o yaml | kubectl apply --server-side -f -
  echo "Ceph ready at $ip:3300; its client configuration in namespace $CLOUD_NS"
}

node_name() { kubectl get nodes -o jsonpath='{.items[0].metadata.name}'; }

# cloud: the one-node sample with the images of the release, the node's name, the file server's
# charts, and cinder on the Ceph above (one copy of each object: one OSD); Ready once every
# component is.
cloud() {
  (cd "$ROOT" && go run ./hack/cloudsample -release "$RELEASE" -node "$(node_name)" \
    -namespace "$OPERATOR_NS" -charts "$FILES_URL/charts/" -ceph-pool-replicas 1 config/samples/lcm/one-node.yaml) >"$STATE/cloud.yaml"
  kubectl apply --server-side -f "$STATE/cloud.yaml"
  kubectl wait --for condition=Ready --timeout "$WAIT_TIMEOUT" ksconfig --all
  kubectl get ksconfig,osnode,oscomp
}

# external: the admin's day one: the external network as code (ProviderNetwork and ProviderSubnet,
# config/samples/day-one/10-external-network.yaml), its gateway address on the host's br-ex
# (created by the openvswitch pod), and a rule that keeps the guests' traffic on this host.
external() {
  kubectl apply --server-side -f "$ROOT/config/samples/day-one/10-external-network.yaml"
  kubectl wait --for condition=Ready --timeout 3m providernetwork/public providersubnet/public-subnet
  ip addr replace "$EXT_HOST/24" dev "$EXT_BRIDGE"
  ip link set "$EXT_BRIDGE" up
  # The host's TCP leaves its checksums to the tap's offload, which OVS's userspace datapath
  # forwards unfinished: the guest would drop every segment from the host.
  ethtool -K "$EXT_BRIDGE" tx off
  iptables -w -C "${NO_FORWARD[@]}" 2>/dev/null || iptables -w -I "${NO_FORWARD[@]}"
}

key() {
  [[ -f $STATE/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N "" -C "kupenstack quickstart" -f "$STATE/id_ed25519"
}

tenant() {
  local sum pub
  sum=$(sha256sum "$(<"$STATE/guest.path")" | cut -d' ' -f1)
  pub=$(<"$STATE/id_ed25519.pub")
  sed -e "s|@GUEST_URL@|$FILES_URL/guest/$(basename "$(<"$STATE/guest.path")")|" -e "s|@GUEST_SHA256@|$sum|" \
    -e "s|@PUBLIC_KEY@|$pub|" "$ROOT/config/samples/quickstart/real-tenant.yaml" | kubectl apply --server-side -f -
  kubectl wait --for condition=Ready --timeout 3m project/$TENANT
  local kind
  for kind in flavors; do kubectl wait --for condition=Ready --timeout "$TENANT_TIMEOUT" "$kind" --all; done
  for kind in images networks subnets routers securitygroups ports floatingips keypairs volumes virtualmachines; do
    kubectl -n $TENANT wait --for condition=Ready --timeout "$TENANT_TIMEOUT" "$kind" --all
  done
  # The operator attaches the volume once the server is ACTIVE, so the VM's wait above may pass
  # just before: wait for the attachment, then for the VM again.
  kubectl -n $TENANT wait --for jsonpath='{.status.resource.status}'=in-use --timeout "$TENANT_TIMEOUT" volume/data
  kubectl -n $TENANT wait --for condition=Ready --timeout "$TENANT_TIMEOUT" virtualmachines --all
  kubectl -n $TENANT get openstack
}

# guest_up: the VM's web server answers at its floating IP from the host.
guest_up() {
  local fip
  fip=$(kubectl -n $TENANT get floatingip web-0 -o jsonpath='{.status.resource.floatingIPAddress}')
  [[ -n $fip ]] || { echo "floating IP web-0 has no address"; return 1; }
  echo "$fip" >"$STATE/fip"
  wait_until 300 curl -fsS --max-time 3 "http://$fip/"
}

up() {
  [[ $EUID -eq 0 ]] || { echo "quickstart: needs root (containerd, kubelet, bridges)" >&2; exit 1; }
  mkdir -p "$LOGS"
  echo "quickstart: logs in $LOGS"
  step "test binaries, kubelet, kube-proxy, CoreDNS, helm (hack/install-test-tools.sh)" "$LOGS/tools.log" tools
  step "real one-node cluster: containerd, kubelet, kube-proxy, CoreDNS on ks0 (hack/real-cluster.sh)" "$LOGS/cluster.log" cluster
  step "OpenStack $RELEASE images from Debian packages, imported (hack/images.sh)" "$LOGS/images.log" images
  step "the test guest's disk (hack/guest-image.sh)" "$LOGS/guest.log" guest
  step "file server: OpenStack-Helm charts and the guest's disk" "$LOGS/files.log" files
  step "operator from charts/kupenstack, life-cycle on" "$LOGS/operator.log" operator
  step "a one-node Ceph for cinder's volumes, its client configuration in namespace $CLOUD_NS" "$LOGS/ceph.log" ceph
  step "the cloud, deployed by the operator (config/samples/lcm/one-node.yaml; 15-25 min)" "$LOGS/cloud.log" cloud
  step "admin: external network public ($EXT_CIDR on $EXT_BRIDGE)" "$LOGS/external.log" external
  step "an SSH key for the demo's KeyPair ($STATE/id_ed25519)" "$LOGS/tenant.log" key
  step "tenant $TENANT: project, image, network, router, security group, key pair, floating IP, volume, VM, all Ready (config/samples/quickstart/real-tenant.yaml)" "$LOGS/tenant.log" tenant
  step "the VM answers HTTP at its floating IP" "$LOGS/tenant.log" guest_up
  echo
  kubectl get ksconfig,oscomp
  kubectl -n $TENANT get openstack
  local fip
  fip=$(<"$STATE/fip")
  cat <<EOF

Real: a one-node Kubernetes cluster running pods on this machine, an OpenStack $RELEASE cloud that
KupenStack deployed into it from the OpenStack-Helm charts (images built from Debian packages),
and a VM booted by nova on libvirt/QEMU in namespace $TENANT's project, with a volume from cinder
on Ceph attached.

Try next:
  export KUBECONFIG=$KC        # kubectl: $TOOLS/kubectl
  curl http://$fip/                                  # the VM's web server (its hostname)
  ssh -i $STATE/id_ed25519 -o StrictHostKeyChecking=no root@$fip cat /root/motd
  ssh -i $STATE/id_ed25519 -o StrictHostKeyChecking=no root@$fip blockdev --getsize64 /dev/vdb   # the volume
  kubectl -n $TENANT get vm web-0 -o yaml            # status: server ID, host, addresses, conditions
  kubectl get oscomp                                 # the cloud's components and their Helm releases
  kubectl get ksconfig kupenstack -o jsonpath='{.status.services}'   # the validation agent's report
  kubectl -n $OPERATOR_NS get secret kupenstack-cloud -o jsonpath='{.data.clouds\.yaml}' | base64 -d
  kubectl delete namespace $TENANT                   # deletes the VM, network, ... and the project
  make quickstart-down                               # stops everything; the host as found
Operator log: kubectl -n $OPERATOR_NS logs deploy/kupenstack
EOF
}

host_down() {
  iptables -w -D "${NO_FORWARD[@]}" 2>/dev/null || true
  ip addr del "$EXT_HOST/24" dev "$EXT_BRIDGE" 2>/dev/null || true
}

cluster_down() { real_cluster down; }

down() {
  if [[ ! -d $STATE ]]; then echo "quickstart: nothing in $STATE"; return; fi
  mkdir -p "$LOGS"
  step "remove the host's external address and forwarding rule" "$LOGS/down.log" host_down
  step "stop the cluster and its cloud; the host as found (hack/real-cluster.sh down)" "$LOGS/down.log" cluster_down
  rm -rf "$STATE"
  echo "quickstart: down"
}

status() {
  real_cluster status || true
  if kubectl get --raw /readyz >/dev/null 2>&1; then
    kubectl get ksconfig,oscomp
    kubectl get openstack -A
  fi
}

case ${1:-} in
  up | down | status) "$1" ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
