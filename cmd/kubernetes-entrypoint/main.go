// Command kubernetes-entrypoint is the charts' dependency-wait init program, a drop-in for
// OpenStack-Helm's dep_check image: it waits for the DEPENDENCY_* environment variables' objects,
// then execs COMMAND. See package internal/depcheck.
package main

import (
	"os"

	"github.com/kupenstack/kupenstack/internal/depcheck"
)

func main() { os.Exit(depcheck.Main(os.Args, os.Getenv, os.Stderr)) }
