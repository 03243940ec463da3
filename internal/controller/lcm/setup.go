package lcm

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kupenstack/kupenstack/internal/controller/lcm/component"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// Options of the life-cycle controllers.
type Options struct {
	// CloudSecret and CloudName: where the admin clouds.yaml of a deployed cloud is published
	// (the operator's own --cloud-secret and --cloud); an empty Secret name publishes nothing.
	CloudSecret types.NamespacedName
	CloudName   string
	// ChartCacheDir receives charts downloaded from a repository or registry.
	ChartCacheDir string
	// ReadyPeriod is how often a ready component's release is checked for drift (default 1 min).
	ReadyPeriod time.Duration
	// ChartLocalPathPrefixes are the directories a configuration's charts.localPath may name
	// (--chart-local-path-prefixes); nil means helm.DefaultLocalPathPrefixes, an empty list none.
	ChartLocalPathPrefixes []string
	// Compute switches the nova-compute service of nodes leaving and rejoining the compute
	// role; nil leaves the services alone.
	Compute ComputeServices
}

// Setup registers every life-cycle controller with mgr: the configuration and node controllers
// and one loop per known component.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.ChartLocalPathPrefixes == nil {
		o.ChartLocalPathPrefixes = helm.DefaultLocalPathPrefixes
	}
	localPaths := &helm.LocalPathPolicy{Prefixes: o.ChartLocalPathPrefixes}
	if err := (&ConfigurationReconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(ConfigurationControllerName),
		ChartLocalPaths: localPaths,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&NodeReconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(NodeControllerName), Compute: o.Compute,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if o.ReadyPeriod == 0 {
		o.ReadyPeriod = time.Minute
	}
	if o.ChartCacheDir == "" {
		o.ChartCacheDir = filepath.Join(os.TempDir(), "kupenstack-charts")
	}
	var publisher *component.CloudPublisher
	if o.CloudSecret.Name != "" {
		publisher = &component.CloudPublisher{Client: mgr.GetClient(), Secret: o.CloudSecret, CloudName: o.CloudName}
	}
	charts := &helm.ChartLoader{CacheDir: o.ChartCacheDir, LocalPaths: localPaths}
	for _, c := range values.Components {
		if err := (&component.Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), RESTConfig: mgr.GetConfig(),
			Recorder: mgr.GetEventRecorder(component.ControllerName(c.Name)), Charts: charts,
			Component: c.Name, ReadyPeriod: o.ReadyPeriod, Publisher: publisher,
		}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("component %s: %w", c.Name, err)
		}
	}
	return nil
}
