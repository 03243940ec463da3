package project

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// ProjectControllerName names the controller in logs, metrics and Events.
const ProjectControllerName = "project"

// Finalizer keeps a Project until its Keystone project is gone (or released).
const Finalizer = "kupenstack.io/project"

// Keystone tag that marks a project as created for the Project object with this UID.
func ownerTag(uid string) string { return "kupenstack-uid-" + uid }

// ProjectReconciler creates the Keystone project of each Project, gives the operator's user a role
// in it (so it can act inside the project with a project-scoped token), and deletes it once the
// namespace and everything in it are gone.
type ProjectReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clients  *openstack.Clients
	// DomainID is the Keystone domain of every project (the cloud's single domain).
	DomainID string
	// MemberRole is the role the operator's user gets in each project.
	MemberRole string
	// NamespaceInUse says whether KupenStack objects remain in a namespace; the Keystone project
	// is deleted only when none do.
	NamespaceInUse func(ctx context.Context, namespace string) (bool, error)
}

// +kubebuilder:rbac:groups=kupenstack.io,resources=projects,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=projects/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=projects/finalizers,verbs=update

// Reconcile makes the Keystone project match the Project object.
func (r *ProjectReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	var p kupenstackv1.Project
	if err := r.Client.Get(ctx, req.NamespacedName, &p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		return r.delete(ctx, &p)
	}
	if controllerutil.AddFinalizer(&p, Finalizer) {
		if err := r.Client.Update(ctx, &p); err != nil {
			return ctrl.Result{}, err
		}
	}
	// First sight: Ready Unknown at once; Keystone may take a while to answer.
	if seen := p.DeepCopy(); conditions.SetUnknownIfNew(&seen.Status.Conditions, p.Generation) {
		if err := r.Client.Status().Patch(ctx, seen, client.MergeFrom(&p)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		p = *seen
	}
	before := p.DeepCopy()
	result, rerr := r.ensure(ctx, &p)
	state := conditions.State{Ready: rerr == nil && p.Status.ID != ""}
	if rerr != nil {
		state = ErrorState(rerr)
		r.Recorder.Eventf(&p, nil, corev1.EventTypeWarning, state.Reason, "Reconcile", "%s", state.Message)
	}
	conditions.Set(&p.Status.Conditions, p.Generation, state)
	p.Status.ObservedGeneration = p.Generation
	if err := r.Client.Status().Patch(ctx, &p, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, err
	}
	return RequeueFor(result, rerr)
}

func (r *ProjectReconciler) ensure(ctx context.Context, p *kupenstackv1.Project) (ctrl.Result, error) {
	identity, err := r.Clients.AdminIdentity(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if p.Status.ID != "" {
		_, err := projects.Get(ctx, identity, p.Status.ID).Extract()
		switch {
		case openstack.IsNotFound(err):
			// Deleted out of band: make a new one; everything in the namespace re-creates into it.
			r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, "ProjectMissing", "Recreate",
				"Keystone project %s disappeared; creating a new one", p.Status.ID)
			r.Clients.Forget(p.Status.ID)
			p.Status.ID = ""
		case err != nil:
			return ctrl.Result{}, err
		}
	}
	if p.Status.ID == "" {
		if err := r.findOrCreate(ctx, identity, p); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, r.ensureRole(ctx, identity, p.Status.ID)
}

// keystoneNameMax is Keystone's limit for project names.
const keystoneNameMax = 64

// KeystoneName is the Keystone project name of a namespace: the prefix and the namespace, or, when
// that is longer than Keystone allows (namespaces reach 63 characters), a shortened namespace and
// a hash of the whole one, so that names stay unique and stable.
func KeystoneName(namespace string) string {
	name := kupenstackv1.ProjectNamePrefix + namespace
	if len(name) <= keystoneNameMax {
		return name
	}
	sum := sha256.Sum256([]byte(namespace))
	suffix := "-" + hex.EncodeToString(sum[:4])
	return name[:keystoneNameMax-len(suffix)] + suffix
}

func (r *ProjectReconciler) findOrCreate(ctx context.Context, identity *gophercloud.ServiceClient, p *kupenstackv1.Project) error {
	name := KeystoneName(p.Spec.Namespace)
	// A crash between create and the status write must not make a second project: look for ours first.
	found, err := listProjects(ctx, identity, projects.ListOpts{DomainID: r.DomainID, Name: name})
	if err != nil {
		return err
	}
	for _, existing := range found {
		ours := hasTag(existing.Tags, ownerTag(string(p.UID)))
		p.Status.ID, p.Status.ProjectName, p.Status.CreatedByKupenstack = existing.ID, existing.Name, ours
		if !ours {
			r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "ProjectAdopted", "Adopt",
				"using the existing Keystone project %s (%s); it will not be deleted with the namespace", name, existing.ID)
		}
		return nil
	}
	created, err := projects.Create(ctx, identity, projects.CreateOpts{
		Name:        name,
		DomainID:    r.DomainID,
		Description: fmt.Sprintf("Kubernetes namespace %s (managed by KupenStack)", p.Spec.Namespace),
		Tags:        []string{ownerTag(string(p.UID))},
	}).Extract()
	if err != nil {
		return err
	}
	p.Status.ID, p.Status.ProjectName, p.Status.CreatedByKupenstack = created.ID, created.Name, true
	r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "ProjectCreated", "Create",
		"created Keystone project %s (%s)", created.Name, created.ID)
	return nil
}

// ensureRole gives the operator's user MemberRole in the project, so its project-scoped tokens work.
func (r *ProjectReconciler) ensureRole(ctx context.Context, identity *gophercloud.ServiceClient, projectID string) error {
	userID, err := r.Clients.AdminUserID(ctx)
	if err != nil {
		return err
	}
	pages, err := roles.List(identity, roles.ListOpts{Name: r.MemberRole}).AllPages(ctx)
	if err != nil {
		return err
	}
	found, err := roles.ExtractRoles(pages)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return fmt.Errorf("keystone has no role %q to give the operator in its projects", r.MemberRole)
	}
	// Assigning is idempotent in Keystone (204 either way), so no need to look first.
	return roles.Assign(ctx, identity, found[0].ID, roles.AssignOpts{UserID: userID, ProjectID: projectID}).ExtractErr()
}

func (r *ProjectReconciler) delete(ctx context.Context, p *kupenstackv1.Project) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(p, Finalizer) {
		return ctrl.Result{}, nil
	}
	inUse, err := r.NamespaceInUse(ctx, p.Spec.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if inUse {
		// The namespace's objects are still being deleted (they need the project to do it).
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if p.Status.ID != "" && p.Status.CreatedByKupenstack {
		if wait, err := r.deleteDefaultSecurityGroup(ctx, p); err != nil || wait > 0 {
			return RequeueFor(ctrl.Result{RequeueAfter: wait}, err)
		}
		identity, err := r.Clients.AdminIdentity(ctx)
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := projects.Delete(ctx, identity, p.Status.ID).ExtractErr(); err != nil && !openstack.IsNotFound(err) {
			return RequeueFor(ctrl.Result{}, err)
		}
		r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "ProjectDeleted", "Delete",
			"deleted Keystone project %s (%s)", p.Status.ProjectName, p.Status.ID)
	}
	r.Clients.Forget(p.Status.ID)
	controllerutil.RemoveFinalizer(p, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, p))
}

// defaultGroupInUseWait is how long a project's deletion waits for the ports that still use its
// default security group: ports of servers deleted just before, which Nova removes a little
// after the server. Ports made outside KupenStack may never go; the project goes without the
// group then.
const defaultGroupInUseWait = time.Minute

// deleteDefaultSecurityGroup deletes the security group named default that Neutron makes in
// every project that uses the network service: nothing else deletes it, and it outlives the
// Keystone project forever (hundreds piled up on the test cloud). It returns how long to wait
// before trying again when the group is still in use.
func (r *ProjectReconciler) deleteDefaultSecurityGroup(ctx context.Context, p *kupenstackv1.Project) (time.Duration, error) {
	// The admin scope: Neutron lets only an admin delete a project's default group.
	neutron, err := r.Clients.Network(ctx, "")
	if err != nil {
		return 0, err
	}
	// Listing by project makes Neutron create the group when the project has none yet; it goes
	// right after, and the project's deletion never lists again.
	pages, err := groups.List(neutron, groups.ListOpts{ProjectID: p.Status.ID, Name: "default"}).AllPages(ctx)
	if err != nil {
		return 0, err
	}
	found, err := groups.ExtractGroups(pages)
	if err != nil {
		return 0, err
	}
	for _, g := range found {
		if g.ProjectID != p.Status.ID || g.Name != "default" { // filters a cloud ignored
			continue
		}
		err := groups.Delete(ctx, neutron, g.ID).ExtractErr()
		switch {
		case err == nil:
			r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "DefaultSecurityGroupDeleted", "Delete",
				"deleted the project's default security group %s", g.ID)
		case openstack.IsNotFound(err):
		case openstack.IsConflict(err) && time.Since(p.DeletionTimestamp.Time) < defaultGroupInUseWait:
			return 5 * time.Second, nil
		case openstack.IsConflict(err):
			r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, "DefaultSecurityGroupInUse", "Delete",
				"left the project's default security group %s, still in use after %s: %v", g.ID, defaultGroupInUseWait, err)
		default:
			return 0, err
		}
	}
	return 0, nil
}

func listProjects(ctx context.Context, identity *gophercloud.ServiceClient, opts projects.ListOpts) ([]projects.Project, error) {
	pages, err := projects.List(identity, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return projects.ExtractProjects(pages)
}

func hasTag(tags []string, tag string) bool {
	for _, t := range tags {
		if t == tag {
			return true
		}
	}
	return false
}

// ErrorState turns an OpenStack error into the conditions that describe it (for the project-level
// controllers, which do not run on the generic engine).
func ErrorState(err error) conditions.State {
	if class, _ := openstack.Classify(err); class == openstack.Rejected {
		return conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: err.Error()}
	}
	return conditions.State{Reason: kupenstackv1.ReasonTransientError, Message: err.Error()}
}

// RequeueFor turns an error into the right retry: throttled and rejected calls wait as long as
// they should, everything else goes to the work queue's exponential backoff.
func RequeueFor(result ctrl.Result, err error) (ctrl.Result, error) {
	if err == nil {
		return result, nil
	}
	if class, delay := openstack.Classify(err); class != openstack.Transient {
		return ctrl.Result{RequeueAfter: delay}, nil
	}
	return ctrl.Result{}, err
}

// Ensure returns the Project of a namespace, creating it (owned by the namespace) when the
// namespace holds its first KupenStack object.
func Ensure(ctx context.Context, c client.Client, namespace string) (*kupenstackv1.Project, error) {
	var p kupenstackv1.Project
	err := c.Get(ctx, client.ObjectKey{Name: namespace}, &p)
	if !apierrors.IsNotFound(err) {
		return &p, err
	}
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
		return nil, err
	}
	if !ns.DeletionTimestamp.IsZero() {
		return nil, fmt.Errorf("namespace %s is being deleted", namespace)
	}
	created := NewProjectFor(&ns)
	if err := controllerutil.SetControllerReference(&ns, created, c.Scheme()); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, created); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	return created, nil
}

// SetupWithManager registers the controller.
func (r *ProjectReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ProjectControllerName).
		For(&kupenstackv1.Project{}).
		Complete(r)
}
