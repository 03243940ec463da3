// Package depcheck is kubernetes-entrypoint (cmd/kubernetes-entrypoint): the dependency-wait
// program OpenStack-Helm's init containers run from the dep_check image. It reads the
// DEPENDENCY_* variables helm-toolkit's kubernetes_entrypoint_init_container snippet sets, polls
// the Kubernetes API until every dependency is satisfied, then execs COMMAND (exit 0 when empty).
//
// One file per kind of dependency (service.go, job.go, daemonset.go, container.go, pod.go,
// customresource.go, file.go), the parsers in config.go, the polling loop in resolve.go and the
// program in main.go. docs/images.md describes the variables and where this differs from
// upstream (github.com/airshipit/kubernetes-entrypoint).
package depcheck
