package generic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// inUse is Neutron's answer to deleting a network that still has ports.
func inUse() error {
	return gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusConflict, Expected: []int{204},
		Body: []byte(`{"NeutronError": {"type": "NetworkInUse", "message": "There are one or more ports still in use on the network."}}`)}
}

func waitGoneNetwork(t *testing.T, key client.ObjectKey, limit time.Duration, what string) {
	t.Helper()
	testenv.Eventually(t, limit, 50*time.Millisecond, what, func() error {
		if err := env.Client.Get(env.Ctx, key, &kupenstackv1.Network{}); err == nil {
			return errStillThere
		}
		return nil
	})
}

var errStillThere = errors.New("still there")

// TestDeleteConflictWaitsAndRetriesSoon: OpenStack refusing a deletion with 409 (in use) is an
// ordering conflict, not a rejected request: the object stays Progressing with reason
// DeletionBlocked and OpenStack's message, is not Degraded, and is deleted within seconds once
// the conflict is over (it was retried only after the 2 minutes of a rejected request).
func TestDeleteConflictWaitsAndRetriesSoon(t *testing.T) {
	ns := readyNamespace(t)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "in-use", Namespace: ns}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	id := waitFor(t, key, "created", func(n *kupenstackv1.Network) bool { return n.Status.ID != "" }).Status.ID
	cloud.block("delete", inUse())
	defer cloud.block("delete", nil)
	if err := env.Client.Delete(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, key, "deletion blocked", func(n *kupenstackv1.Network) bool {
		return condition(n, kupenstackv1.ConditionProgressing).Reason == kupenstackv1.ReasonDeletionBlocked
	})
	p := condition(got, kupenstackv1.ConditionProgressing)
	if p.Status != metav1.ConditionTrue || !strings.Contains(p.Message, "ports still in use") {
		t.Errorf("Progressing = %+v, want True with OpenStack's message", p)
	}
	if d := condition(got, kupenstackv1.ConditionDegraded); d.Status == metav1.ConditionTrue {
		t.Errorf("a deletion waiting for another is Degraded: %+v", d)
	}
	failed, err := eventsAbout(n, "DeleteFailed")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range failed {
		t.Errorf("a blocked deletion was reported as failed: %s", e.Note)
	}
	// What blocked it goes outside KupenStack (no object's deletion to wake it): the retry,
	// DefaultDeletionBlockedRetry later, deletes it.
	cloud.block("delete", nil)
	waitGoneNetwork(t, key, 4*DefaultDeletionBlockedRetry, "the object deleted soon after the conflict ended")
	if _, ok := cloud.get(id); ok {
		t.Error("resource left behind")
	}
}

// inUseCloud is a fake cloud whose resources can be in use by others, as Neutron's are: a
// resource cannot be deleted (409) while the one recorded as its user exists. SecurityGroup
// objects are the carrier, named by their object's name.
type inUseCloud struct {
	mu     sync.Mutex
	exists map[string]bool
	usedBy map[string]string // name -> name of the resource using it
	// deletes counts delete calls by name.
	deletes map[string]int
}

var inUseFake = &inUseCloud{exists: map[string]bool{}, usedBy: map[string]string{}, deletes: map[string]int{}}

func (c *inUseCloud) Get(_ context.Context, _ Scope, id string) (*string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.exists[id] {
		return nil, notFound()
	}
	return &id, nil
}
func (c *inUseCloud) FindOwned(context.Context, Scope, *kupenstackv1.SecurityGroup) (*string, error) {
	return nil, nil
}
func (c *inUseCloud) FindImport(context.Context, Scope, *kupenstackv1.SecurityGroup) (*string, error) {
	return nil, nil
}
func (c *inUseCloud) Create(_ context.Context, _ Scope, g *kupenstackv1.SecurityGroup) (*string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := g.Namespace + "/" + g.Name
	c.exists[id] = true
	return &id, nil
}
func (c *inUseCloud) Diff(Scope, *kupenstackv1.SecurityGroup, *string) Changes { return nil }

func (c *inUseCloud) Update(_ context.Context, _ Scope, _ *kupenstackv1.SecurityGroup, cur *string, _ Changes) (*string, error) {
	return cur, nil
}
func (c *inUseCloud) Delete(_ context.Context, _ Scope, id *string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deletes[*id]++
	if user := c.usedBy[*id]; c.exists[user] {
		return gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusConflict, Expected: []int{204},
			Body: []byte(`{"NeutronError": {"type": "SecurityGroupInUse", "message": "Security Group ` + *id + ` in use."}}`)}
	}
	delete(c.exists, *id)
	return nil
}
func (*inUseCloud) ID(id *string) string { return *id }
func (*inUseCloud) Observe(*kupenstackv1.SecurityGroup, *string) (bool, string) {
	return true, ""
}

// TestBlockedDeletionWokenWhenItsUserGoes: a deletion blocked by a resource in use is tried
// again as soon as another object of the namespace has gone (its resource was the user), not
// only after the fixed retry (an hour for this kind, so only the wake-up can delete it in time).
func TestBlockedDeletionWokenWhenItsUserGoes(t *testing.T) {
	ns := readyNamespace(t)
	used := &kupenstackv1.SecurityGroup{ObjectMeta: metav1.ObjectMeta{Name: "used", Namespace: ns}}
	user := &kupenstackv1.SecurityGroup{ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: ns}}
	inUseFake.mu.Lock()
	inUseFake.usedBy[ns+"/used"] = ns + "/user"
	inUseFake.mu.Unlock()
	for _, g := range []*kupenstackv1.SecurityGroup{used, user} {
		if err := env.Client.Create(env.Ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	blocked := func() error {
		var g kupenstackv1.SecurityGroup
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(used), &g); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(g.Status.Conditions, kupenstackv1.ConditionProgressing); c == nil ||
			c.Reason != kupenstackv1.ReasonDeletionBlocked || !strings.Contains(c.Message, "in use") {
			return fmt.Errorf("conditions %+v", g.Status.Conditions)
		}
		return nil
	}
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, "both created", func() error {
		for _, g := range []*kupenstackv1.SecurityGroup{used, user} {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(g), g); err != nil || g.Status.ID == "" {
				return errStillThere
			}
		}
		return nil
	})
	if err := env.Client.Delete(env.Ctx, used); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, "deletion blocked", blocked)
	if err := env.Client.Delete(env.Ctx, user); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, "blocked deletion woken by its user's", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(used), &kupenstackv1.SecurityGroup{}); err == nil {
			return errStillThere
		}
		return nil
	})
	inUseFake.mu.Lock()
	defer inUseFake.mu.Unlock()
	if inUseFake.exists[ns+"/used"] || inUseFake.exists[ns+"/user"] {
		t.Error("resources left behind")
	}
}
