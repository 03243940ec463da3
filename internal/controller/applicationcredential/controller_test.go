package applicationcredential

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestCreateWritesSecret: the first pass makes a restricted credential in the namespace's
// project with the default role, and a Secret the object owns whose clouds.yaml uses it; the
// secret value appears nowhere but in the Secret.
func TestCreateWritesSecret(t *testing.T) {
	ns, project := namespace(t)
	a := newCred(ns, kupenstackv1.ApplicationCredentialSpec{})
	create(t, a)
	got := wait(t, ns, "ready", ready)

	reqs, _ := fakeKS.calls(project)
	if len(reqs) != 1 || !slices.Equal(reqs[0].Roles, []string{"member"}) || !reqs[0].ExpiresAt.IsZero() ||
		!strings.HasPrefix(reqs[0].Name, "kupenstack-"+string(got.UID)+"-") {
		t.Fatalf("create calls %+v, want one, roles [member], no expiry, named after the UID", reqs)
	}
	s := secretOf(t, ns, "tools")
	if !metav1.IsControlledBy(s, got) || s.Annotations[CredentialIDAnnotation] != got.Status.Current.ID {
		t.Errorf("Secret owners %v annotations %v, want owned by the object and naming %s", s.OwnerReferences, s.Annotations, got.Status.Current.ID)
	}
	var doc struct {
		Clouds map[string]struct {
			AuthType   string            `json:"auth_type"`
			Auth       map[string]string `json:"auth"`
			RegionName string            `json:"region_name"`
			Interface  string            `json:"interface"`
		} `json:"clouds"`
	}
	if err := yaml.Unmarshal(s.Data[KeyCloudsYAML], &doc); err != nil {
		t.Fatal(err)
	}
	cloud := doc.Clouds[CloudName]
	secretValue := cloud.Auth["application_credential_secret"]
	if cloud.AuthType != "v3applicationcredential" || cloud.Auth["application_credential_id"] != got.Status.Current.ID ||
		!strings.HasPrefix(secretValue, "s3cret-value-") || cloud.Auth["auth_url"] != "https://keystone.example:5000/v3" ||
		cloud.RegionName != "RegionOne" || cloud.Interface != "internal" {
		t.Errorf("clouds.yaml %+v", cloud)
	}
	if string(s.Data["OS_APPLICATION_CREDENTIAL_SECRET"]) != secretValue || string(s.Data["OS_AUTH_TYPE"]) != "v3applicationcredential" {
		t.Errorf("OS_* keys %v", s.Data)
	}
	if got.Status.ProjectID != project || got.Status.SecretName != "tools" || got.Status.LastRotationTime != nil {
		t.Errorf("status %+v", got.Status)
	}
	notes := waitEvents(t, got, map[string]int{"Created": 1})
	status, _ := json.Marshal(got.Status)
	if strings.Contains(string(status), secretValue) || strings.Contains(strings.Join(notes, "\n"), secretValue) {
		t.Error("the secret value is in the status or an Event")
	}
}

// TestReaderRole: roles are passed as asked, and changing them replaces the credential.
func TestReaderRole(t *testing.T) {
	ns, project := namespace(t)
	a := newCred(ns, kupenstackv1.ApplicationCredentialSpec{Roles: []kupenstackv1.ApplicationCredentialRole{"reader"},
		RevokeGracePeriod: &kupenstackv1.Duration{}})
	create(t, a)
	first := wait(t, ns, "ready", ready)
	first.Spec.Roles = []kupenstackv1.ApplicationCredentialRole{"member", "reader"}
	if err := env.Client.Update(env.Ctx, first); err != nil {
		t.Fatal(err)
	}
	got := wait(t, ns, "replaced", func(a *kupenstackv1.ApplicationCredential) error {
		if err := ready(a); err != nil {
			return err
		}
		if a.Status.Current.ID == first.Status.Current.ID || len(a.Status.Previous) > 0 {
			return fmt.Errorf("current %s previous %v", a.Status.Current.ID, a.Status.Previous)
		}
		return nil
	})
	reqs, _ := fakeKS.calls(project)
	if len(reqs) != 2 || !slices.Equal(reqs[0].Roles, []string{"reader"}) || !slices.Equal(reqs[1].Roles, []string{"member", "reader"}) {
		t.Errorf("create calls %+v", reqs)
	}
	if fakeKS.exists(first.Status.Current.ID) || !fakeKS.exists(got.Status.Current.ID) {
		t.Error("the old credential was not revoked or the new one is gone")
	}
}

// TestRotationOnRequest: changing spec.rotation makes a new credential, writes it to the Secret,
// and revokes the old one only after the grace period, by which time the Secret holds the new one.
func TestRotationOnRequest(t *testing.T) {
	ns, _ := namespace(t)
	a := newCred(ns, kupenstackv1.ApplicationCredentialSpec{RevokeGracePeriod: &kupenstackv1.Duration{Duration: time.Hour}})
	create(t, a)
	first := wait(t, ns, "ready", ready)
	old := first.Status.Current.ID

	first.Spec.Rotation = "1"
	if err := env.Client.Update(env.Ctx, first); err != nil {
		t.Fatal(err)
	}
	rotated := wait(t, ns, "rotated", func(a *kupenstackv1.ApplicationCredential) error {
		if err := ready(a); err != nil {
			return err
		}
		if a.Status.Current.ID == old || a.Status.Rotation != "1" || len(a.Status.Previous) != 1 {
			return fmt.Errorf("status %+v", a.Status)
		}
		return nil
	})
	if s := secretOf(t, ns, "tools"); s.Annotations[CredentialIDAnnotation] != rotated.Status.Current.ID {
		t.Errorf("Secret holds %s, want %s", s.Annotations[CredentialIDAnnotation], rotated.Status.Current.ID)
	}
	if !fakeKS.exists(old) || rotated.Status.LastRotationTime == nil {
		t.Fatalf("old credential revoked before its grace period, or no rotation time: %+v", rotated.Status)
	}
	prev := rotated.Status.Previous[0]
	if prev.ID != old || prev.RevokeAt == nil || prev.RevokeAt.Sub(clk.Now()) < 59*time.Minute {
		t.Errorf("previous %+v, want %s revoked in an hour", prev, old)
	}

	clk.SetTime(clk.Now().Add(time.Hour + time.Minute))
	poke(t, ns)
	wait(t, ns, "old one revoked", func(a *kupenstackv1.ApplicationCredential) error {
		if len(a.Status.Previous) > 0 || fakeKS.exists(old) {
			return fmt.Errorf("previous %v", a.Status.Previous)
		}
		return nil
	})
	_, revoked := fakeKS.calls("")
	i := slices.IndexFunc(revoked, func(r revokeCall) bool { return r.id == old })
	if i < 0 || revoked[i].secretHeld != rotated.Status.Current.ID {
		t.Errorf("revocations %+v: %s must be revoked while the Secret holds %s", revoked, old, rotated.Status.Current.ID)
	}
	waitEvents(t, rotated, map[string]int{"Rotated": 1, "Revoked": 1})
}

// TestScheduledRotation: rotateEvery replaces the credential when it is due, not before.
func TestScheduledRotation(t *testing.T) {
	ns, _ := namespace(t)
	a := newCred(ns, kupenstackv1.ApplicationCredentialSpec{RotateEvery: &kupenstackv1.Duration{Duration: 10 * time.Minute},
		ExpiresAfter: &kupenstackv1.Duration{Duration: time.Hour}, RevokeGracePeriod: &kupenstackv1.Duration{}})
	create(t, a)
	first := wait(t, ns, "ready", ready)
	if first.Status.Current.ExpiresAt == nil || first.Status.Current.ExpiresAt.Sub(clk.Now()) < 59*time.Minute {
		t.Errorf("expiresAt %v, want an hour from now", first.Status.Current.ExpiresAt)
	}
	clk.SetTime(clk.Now().Add(5 * time.Minute))
	poke(t, ns)
	time.Sleep(time.Second)
	if got := wait(t, ns, "still ready", ready); got.Status.Current.ID != first.Status.Current.ID {
		t.Fatalf("rotated before it was due")
	}
	clk.SetTime(clk.Now().Add(6 * time.Minute))
	poke(t, ns)
	wait(t, ns, "rotated", func(a *kupenstackv1.ApplicationCredential) error {
		if a.Status.Current == nil || a.Status.Current.ID == first.Status.Current.ID || len(a.Status.Previous) > 0 {
			return fmt.Errorf("status %+v", a.Status)
		}
		return nil
	})
}

// TestRevokeFails: a refused revocation leaves the new credential in use (Ready), the object
// Degraded with the error, the old credential listed, and is retried until it works.
func TestRevokeFails(t *testing.T) {
	ns, _ := namespace(t)
	a := newCred(ns, kupenstackv1.ApplicationCredentialSpec{RevokeGracePeriod: &kupenstackv1.Duration{}})
	create(t, a)
	first := wait(t, ns, "ready", ready)
	fakeKS.failDelete(unavailable())
	defer fakeKS.failDelete(nil)
	first.Spec.Rotation = "again"
	if err := env.Client.Update(env.Ctx, first); err != nil {
		t.Fatal(err)
	}
	wait(t, ns, "degraded", func(a *kupenstackv1.ApplicationCredential) error {
		d := meta.FindStatusCondition(a.Status.Conditions, kupenstackv1.ConditionDegraded)
		r := meta.FindStatusCondition(a.Status.Conditions, kupenstackv1.ConditionReady)
		if d == nil || d.Status != metav1.ConditionTrue || d.Reason != kupenstackv1.ReasonTransientError ||
			!strings.Contains(d.Message, "revoking replaced application credential "+first.Status.Current.ID) {
			return fmt.Errorf("degraded %+v", d)
		}
		if r.Status != metav1.ConditionTrue || len(a.Status.Previous) != 1 {
			return fmt.Errorf("ready %+v previous %v", r, a.Status.Previous)
		}
		return nil
	})
	fakeKS.failDelete(nil)
	poke(t, ns) // not the retry backoff's next turn, which grows to a minute while the fault lasts
	wait(t, ns, "revoked after the fault", func(a *kupenstackv1.ApplicationCredential) error {
		d := meta.FindStatusCondition(a.Status.Conditions, kupenstackv1.ConditionDegraded)
		if len(a.Status.Previous) > 0 || d.Status != metav1.ConditionFalse || fakeKS.exists(first.Status.Current.ID) {
			return fmt.Errorf("previous %v degraded %+v", a.Status.Previous, d)
		}
		return nil
	})
}

// TestSecretNameTaken: a Secret the object did not make is never overwritten; the object is
// Degraded until that Secret goes.
func TestSecretNameTaken(t *testing.T) {
	ns, project := namespace(t)
	theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tools"}, StringData: map[string]string{"clouds.yaml": "mine"}}
	create(t, theirs)
	create(t, newCred(ns, kupenstackv1.ApplicationCredentialSpec{}))
	wait(t, ns, "degraded", func(a *kupenstackv1.ApplicationCredential) error {
		d := meta.FindStatusCondition(a.Status.Conditions, kupenstackv1.ConditionDegraded)
		if d == nil || d.Status != metav1.ConditionTrue || d.Reason != kupenstackv1.ReasonInvalidConfiguration ||
			!strings.Contains(d.Message, "Secret tools exists and was not made by this ApplicationCredential") {
			return fmt.Errorf("degraded %+v", d)
		}
		return nil
	})
	if s := secretOf(t, ns, "tools"); string(s.Data["clouds.yaml"]) != "mine" || len(s.OwnerReferences) > 0 {
		t.Errorf("the Secret was changed: %v", s)
	}
	if reqs, _ := fakeKS.calls(project); len(reqs) > 0 {
		t.Errorf("a credential was made for a Secret it cannot write: %+v", reqs)
	}
	if err := env.Client.Delete(env.Ctx, theirs); err != nil {
		t.Fatal(err)
	}
	wait(t, ns, "ready once the Secret is gone", ready)
}

// TestDeleteRevokesEverything: deleting the object revokes the current and the replaced
// credentials, and one made before a crash that nothing recorded, then deletes the Secret.
func TestDeleteRevokesEverything(t *testing.T) {
	ns, project := namespace(t)
	a := newCred(ns, kupenstackv1.ApplicationCredentialSpec{SecretName: "cloud-creds", RevokeGracePeriod: &kupenstackv1.Duration{Duration: time.Hour}})
	create(t, a)
	first := wait(t, ns, "ready", ready)
	first.Spec.Rotation = "r1"
	if err := env.Client.Update(env.Ctx, first); err != nil {
		t.Fatal(err)
	}
	got := wait(t, ns, "rotated", func(a *kupenstackv1.ApplicationCredential) error {
		if len(a.Status.Previous) != 1 {
			return fmt.Errorf("previous %v", a.Status.Previous)
		}
		return nil
	})
	secretOf(t, ns, "cloud-creds")
	ids := []string{got.Status.Current.ID, got.Status.Previous[0].ID}
	fakeKS.mu.Lock()
	fakeKS.deleteErr = nil
	fakeKS.mu.Unlock()
	orphan := fakeKS.plant(namePrefix(got)+"crashed", project)
	ids = append(ids, orphan)

	if err := env.Client.Delete(env.Ctx, got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "object gone", func() error {
		err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(got), &kupenstackv1.ApplicationCredential{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	for _, id := range ids {
		if fakeKS.exists(id) {
			t.Errorf("credential %s not revoked", id)
		}
	}
	err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: "cloud-creds"}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Secret still there: %v", err)
	}
}

// TestOutOfBand: an unrecorded credential (made before a crash) is swept; a credential deleted
// outside KupenStack, or a Secret deleted, is replaced with a Warning.
func TestOutOfBand(t *testing.T) {
	ns, project := namespace(t)
	create(t, newCred(ns, kupenstackv1.ApplicationCredentialSpec{RevokeGracePeriod: &kupenstackv1.Duration{}}))
	first := wait(t, ns, "ready", ready)
	orphan := fakeKS.plant(namePrefix(first)+"crashed", project)
	other := fakeKS.plant("kupenstack-another-object-x", project)
	poke(t, ns)
	eventually(t, "orphan swept", func() error {
		if fakeKS.exists(orphan) {
			return fmt.Errorf("%s still exists", orphan)
		}
		return nil
	})
	if !fakeKS.exists(other) {
		t.Error("swept another object's credential")
	}

	fakeKS.forget(first.Status.Current.ID)
	poke(t, ns)
	second := wait(t, ns, "replaced after out-of-band deletion", func(a *kupenstackv1.ApplicationCredential) error {
		if a.Status.Current == nil || a.Status.Current.ID == first.Status.Current.ID {
			return fmt.Errorf("current %+v", a.Status.Current)
		}
		return nil
	})

	if err := env.Client.Delete(env.Ctx, secretOf(t, ns, "tools")); err != nil {
		t.Fatal(err)
	}
	wait(t, ns, "replaced after the Secret was deleted", func(a *kupenstackv1.ApplicationCredential) error {
		if a.Status.Current == nil || a.Status.Current.ID == second.Status.Current.ID {
			return fmt.Errorf("current %+v", a.Status.Current)
		}
		if s := secretOf(t, ns, "tools"); s.Annotations[CredentialIDAnnotation] != a.Status.Current.ID {
			return fmt.Errorf("Secret holds %s", s.Annotations[CredentialIDAnnotation])
		}
		return nil
	})
	if fakeKS.exists(second.Status.Current.ID) {
		t.Error("the credential whose secret was lost was not revoked")
	}
	waitEvents(t, first, map[string]int{"Rotated": 2})
}

// TestAdoptsAfterCrash: a Secret that holds a credential the status does not record (the
// operator stopped between the two writes) is adopted, not swept.
func TestAdoptsAfterCrash(t *testing.T) {
	ns, project := namespace(t)
	create(t, newCred(ns, kupenstackv1.ApplicationCredentialSpec{RevokeGracePeriod: &kupenstackv1.Duration{}}))
	first := wait(t, ns, "ready", ready)
	// The crash's two writes appear at once: no pass may see the credential without the Secret
	// (it would be swept as unrecorded) or the Secret without the credential.
	fakeKS.failList(unavailable())
	written := fakeKS.plant(namePrefix(first)+"written", project)
	s := secretOf(t, ns, "tools")
	s.Annotations[CredentialIDAnnotation] = written
	if err := env.Client.Update(env.Ctx, s); err != nil {
		t.Fatal(err)
	}
	fakeKS.failList(nil)
	poke(t, ns)
	wait(t, ns, "adopted", func(a *kupenstackv1.ApplicationCredential) error {
		if a.Status.Current == nil || a.Status.Current.ID != written || len(a.Status.Previous) > 0 {
			return fmt.Errorf("status %+v", a.Status)
		}
		return nil
	})
	if !fakeKS.exists(written) || fakeKS.exists(first.Status.Current.ID) {
		t.Error("adopted the wrong credential")
	}
}
