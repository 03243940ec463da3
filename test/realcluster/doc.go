// Package realcluster tests hack/real-cluster.sh, the real one-node Kubernetes cluster: real pods
// and Services, CoreDNS, the isolation of pods from everything outside the cluster's bridge, and
// that `down` leaves the host as `up` found it. It runs only when asked (KUPENSTACK_REAL_CLUSTER=1,
// as root; `make test-real-cluster`), since it changes the host while it runs.
package realcluster
