package depcheck

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Service waits until a Service has at least one ready endpoint address. Like upstream it reads
// the EndpointSlices (label kubernetes.io/service-name) and falls back to the legacy Endpoints
// object, so charts granting RBAC on either keep working.
type Service struct{ Ref }

func (s Service) String() string { return "Service " + s.Ref.String() }

func (s Service) Check(ctx context.Context, e *Env) (string, error) {
	sel := labels.Set{discoveryv1.LabelServiceName: s.Name}.String()
	slices, sliceErr := e.Kube.DiscoveryV1().EndpointSlices(s.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if sliceErr == nil {
		for _, es := range slices.Items {
			for _, ep := range es.Endpoints {
				if len(ep.Addresses) > 0 && (ep.Conditions.Ready == nil || *ep.Conditions.Ready) {
					return "", nil
				}
			}
		}
	}
	//nolint:staticcheck // Endpoints is deprecated, but some charts grant RBAC on it only.
	eps, epErr := e.Kube.CoreV1().Endpoints(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
	if epErr == nil {
		for _, subset := range eps.Subsets {
			if len(subset.Addresses) > 0 {
				return "", nil
			}
		}
	}
	// Both unreadable (RBAC, API down) is an error worth showing; otherwise just not ready.
	if sliceErr != nil && epErr != nil && !apierrors.IsNotFound(epErr) {
		return "", fmt.Errorf("listing EndpointSlices: %v; reading Endpoints: %v", sliceErr, epErr)
	}
	return "no ready endpoint address", nil
}
