// Command imagebuild builds KupenStack's OpenStack images from Debian packages (mmdebstrap) into
// OCI image archives cached in ~/.cache/kupenstack/images. hack/images.sh is its front end.
//
//	imagebuild [-release 2025.1] build [-force] [-no-smoke] [NAME...]
//	imagebuild [-release 2025.1] list
//	imagebuild [-release 2025.1] archives [NAME...]   # cached archive paths, for ctr import
//	imagebuild [-release 2025.1] smoke [NAME...]      # smoke-test the cached archives again
//
// Run it from the repository root.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kupenstack/kupenstack/internal/imagebuild"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run() error {
	release := flag.String("release", "2025.1", "the image set: images/release-<release>.yaml")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: imagebuild [-release R] build [-force] [-no-smoke] [NAME...] | list | archives [NAME...] | smoke [NAME...]")
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		return errors.New("no command")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	root, err := os.Getwd()
	if err != nil {
		return err
	}
	imagesDir := filepath.Join(root, "images")
	recipes, err := imagebuild.LoadRecipes(imagesDir)
	if err != nil {
		return err
	}
	rel, err := imagebuild.LoadRelease(imagebuild.ReleaseFile(imagesDir, *release), recipes)
	if err != nil {
		return err
	}
	cacheDir, err := imagebuild.DefaultCacheDir()
	if err != nil {
		return err
	}
	b := &imagebuild.Builder{RepoRoot: root, Release: rel, Cache: imagebuild.Cache{Dir: cacheDir}, Log: os.Stderr}

	cmd, args := flag.Arg(0), flag.Args()[1:]
	switch cmd {
	case "build":
		fs := flag.NewFlagSet("build", flag.ExitOnError)
		force := fs.Bool("force", false, "rebuild even when cached")
		fs.BoolVar(&b.SkipSmoke, "no-smoke", false, "cache without running the smoke test")
		fs.Parse(args)
		names, err := selectNames(rel, fs.Args())
		if err != nil {
			return err
		}
		return build(ctx, b, recipes, names, *force)
	case "list":
		return list(b, recipes, rel)
	case "archives":
		names, err := selectNames(rel, args)
		if err != nil {
			return err
		}
		for _, n := range names {
			rec, err := lookup(b, recipes[n])
			if err != nil {
				return err
			}
			fmt.Println(rec.Archive)
		}
		return nil
	case "smoke":
		names, err := selectNames(rel, args)
		if err != nil {
			return err
		}
		for _, n := range names {
			rec, err := lookup(b, recipes[n])
			if err != nil {
				return err
			}
			work, err := os.MkdirTemp("", "kupenstack-smoke-"+n+"-")
			if err != nil {
				return err
			}
			if err := imagebuild.Smoke(ctx, recipes[n], rec.Archive, work, os.Stderr); err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
		}
		return nil
	}
	flag.Usage()
	return fmt.Errorf("unknown command %q", cmd)
}

// selectNames checks names against the set; none means the whole set.
func selectNames(rel *imagebuild.Release, names []string) ([]string, error) {
	if len(names) == 0 {
		return rel.Names(), nil
	}
	for _, n := range names {
		if rel.Ref(n) == "" {
			return nil, fmt.Errorf("%s is not in release %s (images/release-%s.yaml)", n, rel.Release, rel.Release)
		}
	}
	return names, nil
}

func lookup(b *imagebuild.Builder, r *imagebuild.Recipe) (*imagebuild.Record, error) {
	rec, key, err := b.Cached(r)
	if err == nil && rec == nil {
		err = fmt.Errorf("%s is not built for release %s (key %s): run hack/images.sh build %s", r.Name, b.Release.Release, key, r.Name)
	}
	return rec, err
}

func build(ctx context.Context, b *imagebuild.Builder, recipes map[string]*imagebuild.Recipe, names []string, force bool) error {
	type line struct {
		rec    *imagebuild.Record
		cached bool
		took   time.Duration
	}
	var lines []line
	var failed []string
	for _, n := range names {
		r := recipes[n]
		if force {
			if key, err := imagebuild.Key(b.RepoRoot, r, b.Release); err == nil {
				os.Remove(filepath.Join(b.Cache.Dir, fmt.Sprintf("%s-%s-%s.json", n, imagebuild.Suite(r, b.Release), key)))
			}
		}
		start := time.Now()
		rec, cached, err := b.Build(ctx, r)
		if err != nil {
			// The other images still build; the command fails at the end.
			fmt.Fprintf(os.Stderr, "%s: FAILED after %s: %v\n", n, time.Since(start).Round(time.Second), err)
			failed = append(failed, n)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		lines = append(lines, line{rec, cached, time.Since(start)})
		fmt.Fprintf(os.Stderr, "%s: %s (%s, %s)\n", n, rec.Ref, map[bool]string{true: "cached", false: "built"}[cached], time.Since(start).Round(time.Millisecond))
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "IMAGE\tREFERENCE\tSTATE\tTOOK\tARCHIVE MiB\tROOTFS MiB")
	for _, l := range lines {
		state := "built"
		if l.cached {
			state = "cached"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.0f\t%.0f\n", l.rec.Name, l.rec.Ref, state, l.took.Round(time.Millisecond),
			float64(l.rec.ArchiveBytes)/(1<<20), float64(l.rec.RootfsBytes)/(1<<20))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d images failed: %v", len(failed), len(names), failed)
	}
	return nil
}

func list(b *imagebuild.Builder, recipes map[string]*imagebuild.Recipe, rel *imagebuild.Release) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "IMAGE\tREFERENCE\tKEY\tSTATE\tBUILD s\tARCHIVE MiB\tROOTFS MiB")
	for _, n := range rel.Names() {
		rec, key, err := b.Cached(recipes[n])
		if err != nil {
			return err
		}
		if rec == nil {
			fmt.Fprintf(w, "%s\t%s\t%s\tnot built\t\t\t\n", n, rel.Ref(n), key)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\tcached %s\t%.0f\t%.0f\t%.0f\n", n, rec.Ref, key, rec.Built.Format(time.RFC3339),
			rec.BuildSeconds, float64(rec.ArchiveBytes)/(1<<20), float64(rec.RootfsBytes)/(1<<20))
	}
	return w.Flush()
}
