// Command cloudsample prints a whole-cloud sample (config/samples/lcm/one-node.yaml) readied for
// a node whose containerd holds the release's images (hack/images.sh), with the charts of a
// repository URL or of a directory of the operator's pod: what the real quickstart applies.
//
//	go run ./hack/cloudsample -node NODE [-release 2025.1] [-namespace NS] [-images DIR] [-ceph-pool-replicas N] -charts URL|DIR SAMPLE.yaml
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/cloudsample"
	"github.com/kupenstack/kupenstack/internal/imagebuild"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cloudsample:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("cloudsample", flag.ContinueOnError)
	node := fs.String("node", "", "the node's name")
	release := fs.String("release", "2025.1", "the image set: images/release-<release>.yaml")
	namespace := fs.String("namespace", "kupenstack-system", "the operator's namespace, where the profile goes")
	imagesDir := fs.String("images", "images", "the image recipes and release files (run from the repository's root)")
	charts := fs.String("charts", "", "a chart repository's URL, or a directory of the operator's pod (charts.localPath)")
	cephPoolReplicas := fs.Int("ceph-pool-replicas", 0, "above 0: cinder too, its volumes on the Ceph whose client configuration the cloud's namespace holds (spec.ceph), with this many copies")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *node == "" || *charts == "" || fs.NArg() != 1 {
		return errors.New("want -node, -charts and one sample file")
	}
	source := kupenstackv1.ChartSource{LocalPath: *charts}
	if strings.HasPrefix(*charts, "http://") || strings.HasPrefix(*charts, "https://") {
		source = kupenstackv1.ChartSource{Repository: *charts}
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	s, err := cloudsample.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	recipes, err := imagebuild.LoadRecipes(*imagesDir)
	if err != nil {
		return err
	}
	rel, err := imagebuild.LoadRelease(imagebuild.ReleaseFile(*imagesDir, *release), recipes)
	if err != nil {
		return err
	}
	if err := s.UseImages(rel, *namespace, *node, source); err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	if *cephPoolReplicas < 0 || *cephPoolReplicas > 10 {
		return fmt.Errorf("-ceph-pool-replicas %d: want 1 to 10 (spec.ceph.poolReplicas), or 0 for no cinder", *cephPoolReplicas)
	}
	if *cephPoolReplicas > 0 {
		s.UseCeph(int32(*cephPoolReplicas))
	}
	out, err := s.YAML()
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
