// Package controller wires every KupenStack controller into a manager; the operator binary and
// the tests that need the whole operator both go through SetupAll.
package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/applicationcredential"
	"github.com/kupenstack/kupenstack/internal/controller/flavor"
	"github.com/kupenstack/kupenstack/internal/controller/floatingip"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/hostaggregate"
	"github.com/kupenstack/kupenstack/internal/controller/image"
	"github.com/kupenstack/kupenstack/internal/controller/keypair"
	"github.com/kupenstack/kupenstack/internal/controller/lcm"
	"github.com/kupenstack/kupenstack/internal/controller/lcm/component"
	"github.com/kupenstack/kupenstack/internal/controller/network"
	"github.com/kupenstack/kupenstack/internal/controller/port"
	"github.com/kupenstack/kupenstack/internal/controller/project"
	"github.com/kupenstack/kupenstack/internal/controller/projectquota"
	"github.com/kupenstack/kupenstack/internal/controller/router"
	"github.com/kupenstack/kupenstack/internal/controller/securitygroup"
	"github.com/kupenstack/kupenstack/internal/controller/servergroup"
	"github.com/kupenstack/kupenstack/internal/controller/subnet"
	"github.com/kupenstack/kupenstack/internal/controller/virtualmachine"
	"github.com/kupenstack/kupenstack/internal/controller/virtualmachineset"
	"github.com/kupenstack/kupenstack/internal/controller/volume"
	"github.com/kupenstack/kupenstack/internal/lcm/computeservice"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/openstack/notifications"
)

// Options are the operator-wide settings the controllers need.
type Options struct {
	// Clients reach the cloud; built from the credentials Secret.
	Clients *openstack.Clients
	// ResyncPeriod is the default drift-check period of OpenStack resources.
	ResyncPeriod time.Duration
	// NotificationsURL, when set, is the AMQP broker of the cloud's notifications: state changes
	// (a server going to ERROR) are then acted on at once rather than at the next list check.
	NotificationsURL string
	// Workers is how many objects of each kind are reconciled at once.
	Workers int
	// VMHealthPeriod is how often each project's servers are checked for failed VMs: a list of
	// those changed since the previous check, all of them once per ResyncPeriod.
	VMHealthPeriod time.Duration
	// DomainID is the Keystone domain of the projects made for namespaces.
	DomainID string
	// MemberRole is the role the operator's user gets in each project.
	MemberRole string
	// LCM switches the cloud life-cycle controllers (KupenstackConfiguration, OpenstackNode):
	// LCMOn, LCMOff, or LCMAuto (also the empty value): on once a KupenstackConfiguration exists,
	// at start-up or when the first one is created.
	LCM string
	// LCMOptions configure the life-cycle controllers when they run.
	LCMOptions lcm.Options
	// ImageSources says which addresses Image downloads may reach besides public ones.
	ImageSources image.SourcePolicy
}

// Values of Options.LCM.
const (
	LCMAuto = "auto"
	LCMOn   = "on"
	LCMOff  = "off"
)

// resourceLists are the list types of every namespaced OpenStack resource kind: a namespace's
// project stays while any of these remain in it.
var resourceLists = []func() client.ObjectList{
	func() client.ObjectList { return &kupenstackv1.NetworkList{} },
	func() client.ObjectList { return &kupenstackv1.SubnetList{} },
	func() client.ObjectList { return &kupenstackv1.SecurityGroupList{} },
	func() client.ObjectList { return &kupenstackv1.RouterList{} },
	func() client.ObjectList { return &kupenstackv1.PortList{} },
	func() client.ObjectList { return &kupenstackv1.FloatingIPList{} },
	func() client.ObjectList { return &kupenstackv1.KeyPairList{} },
	func() client.ObjectList { return &kupenstackv1.ImageList{} },
	func() client.ObjectList { return &kupenstackv1.VolumeList{} },
	func() client.ObjectList { return &kupenstackv1.ServerGroupList{} },
	func() client.ObjectList { return &kupenstackv1.VirtualMachineList{} },
	func() client.ObjectList { return &kupenstackv1.VirtualMachineSetList{} },
	// Its credentials live in the project: deleting the project would revoke them under the object.
	func() client.ObjectList { return &kupenstackv1.ApplicationCredentialList{} },
}

// SetupAll registers all controllers with mgr.
func SetupAll(ctx context.Context, mgr ctrl.Manager, o Options) error {
	c := mgr.GetClient()
	engine := generic.Options{Clients: o.Clients, ResyncPeriod: o.ResyncPeriod, Registry: generic.NewRegistry(), Workers: o.Workers}
	when, err := whenLCM(ctx, mgr, o.LCM)
	if err != nil {
		return err
	}
	// The resource controllers take the listener's notifier now, while they are set up; the
	// listener of a bus the life-cycle publishes starts with the life-cycle controllers.
	listener := notificationsListener(mgr, o, when != lcmNever)
	if listener != nil {
		notifier := generic.NewNotifier()
		engine.Notifier = notifier
		listener.Handle = func(ctx context.Context, ev notifications.Event) {
			notifier.Notify(ctx, ev.Kind, ev.ID)
			if ev.Kind == "Image" { // Glance's notifications do not tell a public image apart
				notifier.Notify(ctx, "PublicImage", ev.ID)
			}
		}
		if o.NotificationsURL != "" {
			if err := mgr.Add(listener); err != nil {
				return err
			}
		}
	}
	setups := []struct {
		name  string
		setup func() error
	}{
		{project.NamespaceControllerName, func() error {
			return (&project.NamespaceReconciler{
				Client: c, Recorder: mgr.GetEventRecorder(project.NamespaceControllerName),
			}).SetupWithManager(mgr)
		}},
		{project.ProjectControllerName, func() error {
			return (&project.ProjectReconciler{
				Client: c, Recorder: mgr.GetEventRecorder(project.ProjectControllerName), Clients: o.Clients,
				DomainID: o.DomainID, MemberRole: o.MemberRole,
				NamespaceInUse: func(ctx context.Context, ns string) (bool, error) { return namespaceInUse(ctx, c, ns) },
			}).SetupWithManager(mgr)
		}},
		{projectquota.ControllerName, func() error {
			return (&projectquota.Reconciler{
				Client: c, Recorder: mgr.GetEventRecorder(projectquota.ControllerName),
				Services: projectquota.OpenStackServices(o.Clients), ResyncPeriod: o.ResyncPeriod,
			}).SetupWithManager(mgr)
		}},
		{applicationcredential.ControllerName, func() error {
			return (&applicationcredential.Reconciler{
				Client: c, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(applicationcredential.ControllerName),
				Keystone: applicationcredential.OpenStackKeystone(o.Clients), ResyncPeriod: o.ResyncPeriod,
			}).SetupWithManager(mgr)
		}},
		{"network", func() error { return network.Setup(ctx, mgr, engine) }},
		{"subnet", func() error { return subnet.Setup(ctx, mgr, engine) }},
		{"providernetwork", func() error { return network.SetupProvider(ctx, mgr, engine) }},
		{"providersubnet", func() error { return subnet.SetupProvider(ctx, mgr, engine) }},
		{"securitygroup", func() error { return securitygroup.Setup(ctx, mgr, engine) }},
		{"router", func() error { return router.Setup(ctx, mgr, engine) }},
		{"port", func() error { return port.Setup(ctx, mgr, engine) }},
		{"floatingip", func() error { return floatingip.Setup(ctx, mgr, engine) }},
		{"keypair", func() error { return keypair.Setup(ctx, mgr, engine) }},
		{"flavor", func() error { return flavor.Setup(ctx, mgr, engine) }},
		{"image", func() error { return image.Setup(ctx, mgr, engine, o.ImageSources) }},
		{"publicimage", func() error { return image.SetupPublic(ctx, mgr, engine, o.ImageSources) }},
		{"volume", func() error { return volume.Setup(ctx, mgr, engine) }},
		{"servergroup", func() error { return servergroup.Setup(ctx, mgr, engine) }},
		{"hostaggregate", func() error { return hostaggregate.Setup(ctx, mgr, engine) }},
		{"virtualmachine", func() error { return virtualmachine.Setup(ctx, mgr, engine, o.VMHealthPeriod) }},
		{virtualmachineset.ControllerName, func() error {
			return (&virtualmachineset.Reconciler{
				Client: c, Recorder: mgr.GetEventRecorder(virtualmachineset.ControllerName),
			}).SetupWithManager(mgr, o.Workers)
		}},
	}
	for _, s := range setups {
		if err := s.setup(); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", s.name, err)
		}
	}
	lcmOptions := o.LCMOptions
	if lcmOptions.Compute == nil && o.Clients != nil {
		lcmOptions.Compute = computeservice.Nova{Clients: o.Clients}
	}
	startLCM := func() error {
		if listener != nil && o.NotificationsURL == "" {
			if err := mgr.Add(listener); err != nil {
				return err
			}
		}
		if err := lcm.Setup(mgr, lcmOptions); err != nil {
			return fmt.Errorf("setting up the life-cycle controllers: %w", err)
		}
		return nil
	}
	switch when {
	case lcmNow:
		return startLCM()
	case lcmOnFirstConfiguration:
		return mgr.Add(&lcmStarter{cache: mgr.GetCache(), start: startLCM})
	}
	return nil
}

// notificationsListener is the listener of the cloud's notification bus: at the URL given, or,
// when none is and the life-cycle publishes the cloud it deploys, at the URL it publishes beside
// the clouds.yaml once Nova is up (read at every connection attempt). Nil: no bus.
func notificationsListener(mgr ctrl.Manager, o Options, lcmOn bool) *notifications.Listener {
	if o.NotificationsURL != "" {
		return &notifications.Listener{URL: o.NotificationsURL}
	}
	if !lcmOn || o.LCMOptions.CloudSecret.Name == "" {
		return nil
	}
	key := types.NamespacedName{Namespace: o.LCMOptions.CloudSecret.Namespace, Name: component.NotificationsSecretName}
	reader := mgr.GetAPIReader()
	return &notifications.Listener{URLFrom: func(ctx context.Context) (string, error) {
		var s corev1.Secret
		if err := reader.Get(ctx, key, &s); apierrors.IsNotFound(err) {
			return "", fmt.Errorf("%w: no Secret %s", notifications.ErrNotPublished, key)
		} else if err != nil {
			return "", fmt.Errorf("reading the Secret %s: %w", key, err)
		}
		return string(s.Data[component.NotificationsURLKey]), nil
	}}
}

// When the life-cycle controllers start.
type lcmStart int

const (
	lcmNever lcmStart = iota
	lcmNow
	lcmOnFirstConfiguration // lcmStarter starts them
)

// whenLCM decides when the life-cycle controllers start: now with LCMOn, never with LCMOff; with
// LCMAuto now when a KupenstackConfiguration exists (read directly from the API server, the cache
// is not running yet), else when the first one is created, or never without the CRD.
func whenLCM(ctx context.Context, mgr ctrl.Manager, mode string) (lcmStart, error) {
	switch mode {
	case LCMOn:
		return lcmNow, nil
	case LCMOff:
		return lcmNever, nil
	case LCMAuto, "":
		var list kupenstackv1.KupenstackConfigurationList
		if err := mgr.GetAPIReader().List(ctx, &list, client.Limit(1)); err != nil {
			// No CRD installed (or no access): the resources flow runs alone.
			ctrl.Log.WithName("setup").Info("life-cycle controllers off: cannot list KupenstackConfigurations", "error", err.Error())
			return lcmNever, nil
		}
		if len(list.Items) > 0 {
			return lcmNow, nil
		}
		return lcmOnFirstConfiguration, nil
	default:
		return lcmNever, fmt.Errorf("unknown life-cycle mode %q: want %s, %s or %s", mode, LCMAuto, LCMOn, LCMOff)
	}
}

// namespaceInUse says whether any OpenStack resource object remains in namespace ns.
func namespaceInUse(ctx context.Context, c client.Client, ns string) (bool, error) {
	for _, newList := range resourceLists {
		list := newList()
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		if meta.LenList(list) > 0 {
			return true, nil
		}
	}
	return false, nil
}
