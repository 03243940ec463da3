package e2e

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// crashAnnotation makes the operator "die" right after an object's OpenStack create call: every
// status write that would record the object's OpenStack ID fails, as if the process had stopped
// between the two calls. Removing the annotation is the restart. Deletions are not affected.
const crashAnnotation = "e2e.kupenstack.io/crash-before-status-id"

var errInjectedCrash = errors.New("e2e: injected crash before the status write")

// crashingClient is the manager's client with the crashAnnotation fault.
type crashingClient struct{ client.Client }

func (c crashingClient) Status() client.SubResourceWriter { return crashingStatus{c.Client.Status()} }

type crashingStatus struct{ client.SubResourceWriter }

func (s crashingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if crashes(obj) {
		return errInjectedCrash
	}
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func (s crashingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if crashes(obj) {
		return errInjectedCrash
	}
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func crashes(obj client.Object) bool {
	m, ok := obj.(kupenstackv1.ManagedObject)
	_, marked := obj.GetAnnotations()[crashAnnotation]
	return ok && marked && obj.GetDeletionTimestamp().IsZero() && m.GetManagedStatus().ID != ""
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// operatorLog is everything logged while the tests ran (the operator's log included).
var operatorLog syncBuffer
