// Package applicationcredential gives the tools of a namespace their own OpenStack credential: a
// Keystone application credential of the operator's user, restricted to the namespace's project
// and to the roles asked for, written as a clouds.yaml into a Secret of the namespace.
//
// A credential has a secret that Keystone shows once and a Secret to keep in step, and it is
// replaced rather than updated, so the kind does not run on the generic engine; it shares its
// conditions, error classification and retries.
package applicationcredential

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/project"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// ControllerName names the controller in logs, metrics and Events.
const ControllerName = "applicationcredential"

// Finalizer keeps an ApplicationCredential until every credential it made is revoked.
const Finalizer = "kupenstack.io/application-credential"

// DefaultRevokeGracePeriod is how long a replaced credential keeps working when the spec does not
// say: longer than the kubelet takes to refresh a mounted Secret (about a minute).
const DefaultRevokeGracePeriod = 2 * time.Minute

// Reconciler keeps ApplicationCredentials.
type Reconciler struct {
	Client client.Client
	// APIReader reads the object and its Secret past the cache: a decision taken on a stale
	// status or Secret could revoke the credential that tools are using.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Keystone  Keystone
	// ResyncPeriod is how often Keystone is checked for a credential deleted behind the
	// operator's back.
	ResyncPeriod time.Duration
	// Clock is the time rotations and revocations are scheduled by; nil is the real clock.
	Clock clock.PassiveClock
}

// +kubebuilder:rbac:groups=kupenstack.io,resources=applicationcredentials,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=applicationcredentials/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=applicationcredentials/finalizers,verbs=update
// +kubebuilder:rbac:groups=kupenstack.io,resources=projects,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// Reconcile makes sure the Secret holds a working credential that matches the spec, and revokes
// replaced ones once their grace period is over.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var a kupenstackv1.ApplicationCredential
	if err := r.APIReader.Get(ctx, req.NamespacedName, &a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !a.DeletionTimestamp.IsZero() {
		return r.delete(ctx, &a)
	}
	if controllerutil.AddFinalizer(&a, Finalizer) {
		if err := r.Client.Update(ctx, &a); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := a.DeepCopy()
	conditions.SetUnknownIfNew(&a.Status.Conditions, a.Generation)
	state, requeue, err := r.apply(ctx, &a)
	if err != nil {
		// A failure after the Secret got a working credential (a revocation) leaves it Ready.
		ready := state.Ready
		state = project.ErrorState(err)
		state.Ready = ready
	}
	if state.Reason != "" {
		r.Recorder.Eventf(&a, nil, corev1.EventTypeWarning, state.Reason, "Reconcile", "%s", state.Message)
	}
	conditions.Set(&a.Status.Conditions, a.Generation, state)
	a.Status.ObservedGeneration = a.Generation
	// Optimistic lock: the status records which credentials exist; it must not overwrite a
	// newer record.
	if err := r.Client.Status().Patch(ctx, &a, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return project.RequeueFor(ctrl.Result{RequeueAfter: requeue}, err)
}

// apply brings Keystone and the Secret in line with the spec. It records every credential it
// makes in a.Status before it returns, an error included.
func (r *Reconciler) apply(ctx context.Context, a *kupenstackv1.ApplicationCredential) (conditions.State, time.Duration, error) {
	for field, d := range map[string]*kupenstackv1.Duration{
		"expiresAfter": a.Spec.ExpiresAfter, "rotateEvery": a.Spec.RotateEvery, "revokeGracePeriod": a.Spec.RevokeGracePeriod,
	} {
		if err := d.Err(); err != nil { // stored before admission checked the field
			return conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration,
				Message: "spec." + field + ": " + err.Error() + "; correct or remove it"}, 0, nil
		}
	}
	projectID, waiting, err := r.project(ctx, a.Namespace)
	if err != nil || waiting != "" {
		return conditions.State{Waiting: waiting}, 0, err
	}
	a.Status.ProjectID = projectID
	a.Status.SecretName = a.TargetSecretName()

	secret, err := r.secret(ctx, a)
	if err != nil {
		return conditions.State{}, 0, err
	}
	if secret != nil && !metav1.IsControlledBy(secret, a) {
		// Never overwrite what someone else keeps there. The Secret watch wakes the object
		// once that Secret is gone.
		return conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: fmt.Sprintf(
			"Secret %s exists and was not made by this ApplicationCredential; it is left as it is: delete it or set another spec.secretName",
			secret.Name)}, 0, nil
	}
	existing, err := r.Keystone.List(ctx, namePrefix(a))
	if err != nil {
		return conditions.State{}, 0, fmt.Errorf("listing the application credentials: %w", err)
	}
	inKeystone := map[string]bool{}
	for _, c := range existing {
		inKeystone[c.ID] = true
	}
	r.adopt(a, secret, existing)
	if err := r.sweep(ctx, a, secret, existing); err != nil {
		return conditions.State{}, 0, err
	}

	now := r.now()
	if why, warning := r.replaceReason(a, secret, inKeystone, now); why != "" {
		if err := r.replace(ctx, a, secret, projectID, why, warning, now); err != nil {
			return conditions.State{}, 0, err
		}
	}
	if err := r.revokeDue(ctx, a, now); err != nil {
		return conditions.State{Ready: true}, 0, err
	}
	return conditions.State{Ready: true}, r.nextPass(a, now), nil
}

// namePrefix starts the Keystone name of every credential made for a: the object's UID, so that
// a new object of the same name never claims an old one's credentials.
func namePrefix(a *kupenstackv1.ApplicationCredential) string {
	return "kupenstack-" + string(a.UID) + "-"
}

// project returns the ID of the namespace's Keystone project, or what the object waits for.
func (r *Reconciler) project(ctx context.Context, namespace string) (string, string, error) {
	p, err := project.Ensure(ctx, r.Client, namespace)
	switch {
	case err != nil:
		return "", "", err
	case !p.DeletionTimestamp.IsZero():
		return "", fmt.Sprintf("the OpenStack project of namespace %s is being deleted", namespace), nil
	case p.Status.ID == "" || !conditions.IsReady(p.Status.Conditions, p.Generation):
		return "", fmt.Sprintf("waiting for the OpenStack project of namespace %s (kubectl get project %s)", namespace, namespace), nil
	}
	return p.Status.ID, "", nil
}

// secret reads the target Secret; nil when there is none.
func (r *Reconciler) secret(ctx context.Context, a *kupenstackv1.ApplicationCredential) (*corev1.Secret, error) {
	var s corev1.Secret
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.TargetSecretName()}, &s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s: %w", a.TargetSecretName(), err)
	}
	return &s, nil
}

// adopt records the credential the Secret holds when the status does not: the operator stopped
// (or its status write lost a race) between writing the Secret and recording it.
func (r *Reconciler) adopt(a *kupenstackv1.ApplicationCredential, secret *corev1.Secret, existing []Credential) {
	id := heldBy(secret)
	if id == "" || (a.Status.Current != nil && a.Status.Current.ID == id) {
		return
	}
	i := slices.IndexFunc(existing, func(c Credential) bool { return c.ID == id })
	if i < 0 {
		return
	}
	c := existing[i]
	now := r.now()
	r.retireCurrent(a, now)
	a.Status.Previous = slices.DeleteFunc(a.Status.Previous, func(p kupenstackv1.ApplicationCredentialRef) bool { return p.ID == id })
	a.Status.Current = r.ref(c, wantedRoles(a), now)
	a.Status.Rotation = a.Spec.Rotation
}

// sweep revokes credentials made for a that nothing records (made just before the operator
// stopped, their secret never written anywhere), and forgets replaced ones already gone.
func (r *Reconciler) sweep(ctx context.Context, a *kupenstackv1.ApplicationCredential, secret *corev1.Secret, existing []Credential) error {
	known := map[string]bool{heldBy(secret): true}
	if a.Status.Current != nil {
		known[a.Status.Current.ID] = true
	}
	for _, p := range a.Status.Previous {
		known[p.ID] = true
	}
	inKeystone := map[string]bool{}
	for _, c := range existing {
		inKeystone[c.ID] = true
		if known[c.ID] {
			continue
		}
		if err := r.Keystone.Delete(ctx, c.ID); err != nil {
			return fmt.Errorf("revoking unrecorded application credential %s: %w", c.ID, err)
		}
		r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "Revoked", "Revoke",
			"revoked application credential %s: made for this object but never recorded (the operator stopped before it could)", c.ID)
	}
	a.Status.Previous = slices.DeleteFunc(a.Status.Previous, func(p kupenstackv1.ApplicationCredentialRef) bool { return !inKeystone[p.ID] })
	return nil
}

// replaceReason says why a new credential is needed now, if it is, and whether that is news a
// human should see (a Warning).
func (r *Reconciler) replaceReason(a *kupenstackv1.ApplicationCredential, secret *corev1.Secret, inKeystone map[string]bool, now time.Time) (string, bool) {
	cur := a.Status.Current
	switch {
	case cur == nil:
		return "first credential", false
	case !inKeystone[cur.ID]:
		return fmt.Sprintf("application credential %s was deleted outside KupenStack", cur.ID), true
	case heldBy(secret) != cur.ID:
		return fmt.Sprintf("Secret %s no longer holds application credential %s (its secret cannot be read back from Keystone)", a.TargetSecretName(), cur.ID), true
	case !sameRoles(cur.Roles, wantedRoles(a)):
		return "spec.roles changed", false
	case !sameExpiry(cur, a.Spec.ExpiresAfter):
		return "spec.expiresAfter changed", false
	case a.Spec.Rotation != a.Status.Rotation:
		return fmt.Sprintf("rotation %q requested", a.Spec.Rotation), false
	}
	if due, ok := rotationDue(a); ok && !now.Before(due) {
		return "scheduled rotation", false
	}
	return "", false
}

// replace makes a new credential, writes it to the Secret and only then retires the current one,
// which keeps working for the grace period.
func (r *Reconciler) replace(ctx context.Context, a *kupenstackv1.ApplicationCredential, secret *corev1.Secret, projectID, why string, warning bool, now time.Time) error {
	loc, err := r.Keystone.Location(ctx)
	if err != nil {
		return err
	}
	req := Request{
		Name:        namePrefix(a) + randomSuffix(),
		Description: truncate(fmt.Sprintf("KupenStack ApplicationCredential %s/%s", a.Namespace, a.Name), 255),
		Roles:       roleNames(wantedRoles(a)),
	}
	if d := a.Spec.ExpiresAfter; d != nil {
		req.ExpiresAt = now.Add(d.Duration)
	}
	made, err := r.Keystone.Create(ctx, projectID, req)
	if err != nil {
		return fmt.Errorf("making an application credential in project %s: %w", projectID, err)
	}
	if err := r.writeSecret(ctx, a, secret, loc, made); err != nil {
		// Its secret is nowhere now: it can never be used, so it goes (the sweep retries).
		_ = r.Keystone.Delete(ctx, made.ID)
		return fmt.Errorf("writing Secret %s: %w", a.TargetSecretName(), err)
	}
	old := a.Status.Current
	r.retireCurrent(a, now)
	a.Status.Current = r.ref(made, wantedRoles(a), now)
	a.Status.Rotation = a.Spec.Rotation
	if old == nil {
		r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "Created", "Create",
			"made application credential %s (roles %s) in project %s and wrote it to Secret %s",
			made.ID, strings.Join(req.Roles, ", "), projectID, a.TargetSecretName())
		return nil
	}
	t := metav1.NewTime(now)
	a.Status.LastRotationTime = &t
	kind := corev1.EventTypeNormal
	if warning {
		kind = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(a, nil, kind, "Rotated", "Rotate",
		"%s: made application credential %s (roles %s) and wrote it to Secret %s; %s is revoked at %s",
		why, made.ID, strings.Join(req.Roles, ", "), a.TargetSecretName(), old.ID, a.Status.Previous[len(a.Status.Previous)-1].RevokeAt.UTC().Format(time.RFC3339))
	return nil
}

// retireCurrent moves the current credential to the replaced ones, revoked after the grace period.
func (r *Reconciler) retireCurrent(a *kupenstackv1.ApplicationCredential, now time.Time) {
	cur := a.Status.Current
	if cur == nil {
		return
	}
	at := metav1.NewTime(now.Add(gracePeriod(a)))
	cur.RevokeAt = &at
	a.Status.Previous = append(a.Status.Previous, *cur)
	a.Status.Current = nil
}

// revokeDue revokes the replaced credentials whose grace period is over.
func (r *Reconciler) revokeDue(ctx context.Context, a *kupenstackv1.ApplicationCredential, now time.Time) error {
	var keep []kupenstackv1.ApplicationCredentialRef
	var failed error
	for _, p := range a.Status.Previous {
		if p.RevokeAt != nil && now.Before(p.RevokeAt.Time) {
			keep = append(keep, p)
			continue
		}
		if err := r.Keystone.Delete(ctx, p.ID); err != nil {
			keep = append(keep, p)
			if failed == nil {
				failed = fmt.Errorf("revoking replaced application credential %s: %w", p.ID, err)
			}
			continue
		}
		r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "Revoked", "Revoke", "revoked replaced application credential %s", p.ID)
	}
	a.Status.Previous = keep
	return failed
}

// nextPass is when the object must be looked at again: the next revocation or rotation, or the
// resync that notices a credential deleted outside KupenStack.
func (r *Reconciler) nextPass(a *kupenstackv1.ApplicationCredential, now time.Time) time.Duration {
	var next time.Duration
	consider := func(at time.Time) {
		d := at.Sub(now) + time.Second // a little after: never a pass just before it is due
		if d < time.Second {
			d = time.Second
		}
		if next == 0 || d < next {
			next = d
		}
	}
	for _, p := range a.Status.Previous {
		if p.RevokeAt != nil {
			consider(p.RevokeAt.Time)
		}
	}
	if due, ok := rotationDue(a); ok {
		consider(due)
	}
	if r.ResyncPeriod > 0 {
		if d := generic.Jittered(r.ResyncPeriod); next == 0 || d < next {
			next = d
		}
	}
	return next
}

// delete revokes every credential the object made, then its Secret, then lets it go.
func (r *Reconciler) delete(ctx context.Context, a *kupenstackv1.ApplicationCredential) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(a, Finalizer) {
		return ctrl.Result{}, nil
	}
	ids := []string{}
	if a.Status.Current != nil {
		ids = append(ids, a.Status.Current.ID)
	}
	for _, p := range a.Status.Previous {
		ids = append(ids, p.ID)
	}
	// Also any the status missed (made just before a crash).
	existing, err := r.Keystone.List(ctx, namePrefix(a))
	if err != nil {
		r.Recorder.Eventf(a, nil, corev1.EventTypeWarning, "DeleteFailed", "Delete", "listing the application credentials: %v", err)
		return project.RequeueFor(ctrl.Result{}, err)
	}
	for _, c := range existing {
		if !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
	}
	for _, id := range ids {
		if err := r.Keystone.Delete(ctx, id); err != nil {
			r.Recorder.Eventf(a, nil, corev1.EventTypeWarning, "DeleteFailed", "Delete", "revoking application credential %s: %v", id, err)
			return project.RequeueFor(ctrl.Result{}, err)
		}
	}
	if len(ids) > 0 {
		r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "Revoked", "Delete", "revoked application credential(s) %s", strings.Join(ids, ", "))
	}
	// The garbage collector would delete the Secret after the object; deleting it now leaves no
	// Secret with a revoked credential behind if the object lingers.
	if s, err := r.secret(ctx, a); err != nil {
		return ctrl.Result{}, err
	} else if s != nil && metav1.IsControlledBy(s, a) {
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	controllerutil.RemoveFinalizer(a, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, a))
}

// writeSecret puts credential c into the target Secret (existing, or a new one the object owns).
func (r *Reconciler) writeSecret(ctx context.Context, a *kupenstackv1.ApplicationCredential, existing *corev1.Secret, loc openstack.Location, c Credential) error {
	data, err := secretData(loc, c)
	if err != nil {
		return err
	}
	s := existing
	if s == nil {
		s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.TargetSecretName()}, Type: corev1.SecretTypeOpaque}
	}
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, CredentialIDAnnotation, c.ID)
	s.Data = data
	if err := controllerutil.SetControllerReference(a, s, r.Client.Scheme()); err != nil {
		return err
	}
	if existing == nil {
		return r.Client.Create(ctx, s)
	}
	// existing carries the resourceVersion read in this pass: a concurrent change is a conflict.
	return r.Client.Update(ctx, s)
}

func (r *Reconciler) ref(c Credential, roles []kupenstackv1.ApplicationCredentialRole, now time.Time) *kupenstackv1.ApplicationCredentialRef {
	ref := &kupenstackv1.ApplicationCredentialRef{ID: c.ID, Name: c.Name, CreatedAt: metav1.NewTime(now), Roles: roles}
	if !c.ExpiresAt.IsZero() {
		t := metav1.NewTime(c.ExpiresAt)
		ref.ExpiresAt = &t
	}
	return ref
}

// heldBy is the ID of the credential a Secret holds, as its annotation says.
func heldBy(s *corev1.Secret) string {
	if s == nil {
		return ""
	}
	return s.Annotations[CredentialIDAnnotation]
}

func wantedRoles(a *kupenstackv1.ApplicationCredential) []kupenstackv1.ApplicationCredentialRole {
	if len(a.Spec.Roles) == 0 {
		return []kupenstackv1.ApplicationCredentialRole{kupenstackv1.ApplicationCredentialRoleMember}
	}
	roles := slices.Clone(a.Spec.Roles)
	slices.Sort(roles)
	return slices.Compact(roles)
}

func roleNames(roles []kupenstackv1.ApplicationCredentialRole) []string {
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = string(r)
	}
	return out
}

func sameRoles(a, b []kupenstackv1.ApplicationCredentialRole) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// sameExpiry says whether cur was made with the expiry the spec asks for now.
func sameExpiry(cur *kupenstackv1.ApplicationCredentialRef, expiresAfter *kupenstackv1.Duration) bool {
	if expiresAfter == nil || cur.ExpiresAt == nil {
		return (expiresAfter == nil) == (cur.ExpiresAt == nil)
	}
	// Times in the status are whole seconds.
	diff := cur.ExpiresAt.Sub(cur.CreatedAt.Add(expiresAfter.Duration))
	return diff > -2*time.Second && diff < 2*time.Second
}

// rotationDue is when the current credential is replaced by schedule: rotateEvery after it was
// made, or, without rotateEvery, after two thirds of its lifetime, so that it never expires
// while tools use it.
func rotationDue(a *kupenstackv1.ApplicationCredential) (time.Time, bool) {
	cur := a.Status.Current
	switch {
	case cur == nil:
		return time.Time{}, false
	case a.Spec.RotateEvery != nil && a.Spec.RotateEvery.Duration > 0:
		return cur.CreatedAt.Add(a.Spec.RotateEvery.Duration), true
	case a.Spec.ExpiresAfter != nil && a.Spec.ExpiresAfter.Duration > 0:
		return cur.CreatedAt.Add(a.Spec.ExpiresAfter.Duration * 2 / 3), true
	}
	return time.Time{}, false
}

func gracePeriod(a *kupenstackv1.ApplicationCredential) time.Duration {
	if g := a.Spec.RevokeGracePeriod; g != nil && g.Duration >= 0 {
		return g.Duration
	}
	return DefaultRevokeGracePeriod
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// SetupWithManager registers the controller: ApplicationCredentials, the Secrets they write or
// wait for (metadata only: the cache holds no secret value), and the Projects they wait for.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	inNamespace := func(ctx context.Context, ns string, match func(*kupenstackv1.ApplicationCredential) bool) []reconcile.Request {
		var list kupenstackv1.ApplicationCredentialList
		if err := r.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			if match(&list.Items[i]) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return out
	}
	bySecret := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return inNamespace(ctx, o.GetNamespace(), func(a *kupenstackv1.ApplicationCredential) bool { return a.TargetSecretName() == o.GetName() })
	})
	byProject := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return inNamespace(ctx, o.GetName(), func(*kupenstackv1.ApplicationCredential) bool { return true })
	})
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		// Not its own status writes: a rejected request would be retried at once instead of slowly.
		For(&kupenstackv1.ApplicationCredential{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() }},
		))).
		Watches(&corev1.Secret{}, bySecret, builder.OnlyMetadata).
		Watches(&kupenstackv1.Project{}, byProject).
		WithOptions(controller.Options{RateLimiter: generic.RetryLimiter()}).
		Complete(r)
}
