package openstack

import (
	"context"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretSource reads clouds.yaml from a Secret, at most once per ttl: reading it directly (not
// through a cache) keeps the operator from watching every Secret in the cluster.
func SecretSource(reader client.Reader, key types.NamespacedName, ttl time.Duration) CredentialSource {
	var (
		mu      sync.Mutex
		data    []byte
		fetched time.Time
	)
	return func(ctx context.Context) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		if data != nil && time.Since(fetched) < ttl {
			return data, nil
		}
		fresh, err := readSecret(ctx, reader, key)
		if err != nil {
			return nil, err
		}
		data, fetched = fresh, time.Now()
		return data, nil
	}
}

// FileSource reads clouds.yaml from a file (used by tests and local runs).
func FileSource(path string) CredentialSource {
	return func(context.Context) ([]byte, error) { return os.ReadFile(path) }
}
