package generic

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// WakeOn is a Watch on objects of kind W for what a kind waits on without naming it (a Port for
// its network's first Subnet): a change of a W wakes the objects, in its namespace, that waits
// selects among those newList lists, instead of their wait's next poll.
func WakeOn[W any, PW interface {
	*W
	client.Object
}](c client.Reader, newList func() client.ObjectList, waits func(changed PW, obj client.Object) bool) Watch {
	return Watch{Object: PW(new(W)), Map: func(ctx context.Context, o client.Object) []reconcile.Request {
		changed := o.(PW)
		list := newList()
		if err := c.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the objects a change may wake")
			return nil
		}
		var reqs []reconcile.Request
		_ = meta.EachListItem(list, func(item runtime.Object) error {
			if obj := item.(client.Object); waits(changed, obj) {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}})
			}
			return nil
		})
		return reqs
	}}
}
