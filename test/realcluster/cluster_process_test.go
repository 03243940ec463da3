package realcluster

import "testing"

func TestClusterProcess(t *testing.T) {
	const (
		state = "/var/lib/kupenstack/real-cluster-test"
		sock  = state + "/containerd/containerd.sock"
		conf  = state + "/conf/containerd.toml"
		etcd  = "/repo/bin/etcd-v3.7.3"
	)
	ours := map[string]bool{etcd: true, "/repo/bin/kube-apiserver-v1.37.2": true}
	for _, c := range []struct {
		name, exe, args string
		want            bool
	}{
		{"the cluster's etcd", etcd, etcd + " --name real-cluster --data-dir " + state + "/etcd", true},
		{"the cluster's kube-apiserver", "/repo/bin/kube-apiserver-v1.37.2", "kube-apiserver --tls-cert-file " + state + "/pki/apiserver.crt", true},
		{"an envtest etcd beside it, the same binary", etcd, etcd + " --data-dir=/tmp/k8s_test_framework_1666533969 --listen-client-urls=http://127.0.0.1:36039", false},
		{"another state directory sharing the prefix", etcd, etcd + " --data-dir " + state + "-2/etcd", false},
		{"containerd", "/usr/bin/containerd", "containerd --config " + conf, true},
		{"a shim", "/usr/bin/containerd-shim-runc-v2", "containerd-shim-runc-v2 -namespace k8s.io -address " + sock, true},
		{"anything else", "/usr/bin/python3", "python3 fake-ovs-agent.py", false},
	} {
		if got := clusterProcess(c.exe, c.args, ours, state, sock, conf); got != c.want {
			t.Errorf("%s: clusterProcess = %v, want %v", c.name, got, c.want)
		}
	}
}
