package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/lcm/render"
)

// fileList is a repeatable -f flag.
type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(v string) error { *f = append(*f, v); return nil }

const renderUsage = `usage: kupenstack render -f FILE [-f FILE...] [--charts DIR] [--component NAME] [--out DIR]

Renders what the life-cycle controllers would deploy for a KupenstackConfiguration and its
OpenstackCloudConfigurationProfiles (YAML files, - for stdin), without a cluster: every
component's Helm values (generated passwords shown as placeholders) and, with --charts, the
charts' manifests, validated against the Kubernetes API types.
`

// runRender is the render subcommand; it writes the values to stdout unless --out is given, and
// a summary to stderr.
func runRender(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, renderUsage); fs.PrintDefaults() }
	var files fileList
	fs.Var(&files, "f", "file with the configuration and profiles (repeatable; - for stdin)")
	charts := fs.String("charts", "", "directory with one chart per component: render and validate the manifests")
	only := fs.String("component", "", "render only this component")
	out := fs.String("out", "", "write <component>.values.yaml (and .manifest.yaml) into this directory instead of stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return fmt.Errorf("render: no -f file given")
	}
	var input bytes.Buffer
	for _, f := range files {
		var b []byte
		var err error
		if f == "-" {
			b, err = io.ReadAll(stdin)
		} else {
			b, err = os.ReadFile(f)
		}
		if err != nil {
			return fmt.Errorf("render: %w", err)
		}
		input.Write(b)
		input.WriteString("\n---\n")
	}
	docs, err := render.Parse(&input)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	for _, s := range docs.Skipped {
		fmt.Fprintln(stderr, "skipped "+s)
	}
	comps, runErr := render.Run(docs, render.Options{Charts: *charts, Only: *only})
	if comps == nil && runErr != nil {
		return fmt.Errorf("render: %w", runErr)
	}
	// Every component is rendered and reported, even after a failure.
	render.Summary(stderr, comps)
	if *out != "" {
		if err := render.Write(*out, comps); err != nil {
			return err
		}
	} else {
		for _, c := range comps {
			if c.Err != nil {
				continue
			}
			b, err := yaml.Marshal(c.Values)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "---\n# component %s: chart %s %s\n%s", c.Name, c.Chart, c.ChartVersion, b)
		}
	}
	if runErr != nil {
		failed := 0
		for _, c := range comps {
			if c.Err != nil {
				failed++
			}
		}
		return fmt.Errorf("render: %d of %d components failed (above)", failed, len(comps))
	}
	return nil
}
