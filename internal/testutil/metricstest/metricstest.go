// Package metricstest reads the operator's Prometheus metrics in tests that run the controllers
// in-process.
package metricstest

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Sum is the sum of the counter name over its series whose labels include labels (all of them
// when labels is empty).
func Sum(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(labels) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
