package depcheck

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// Socket waits until a file (usually a unix socket) exists and can be looked at.
type Socket struct{ Path string }

func (s Socket) String() string { return "Socket " + s.Path }

func (s Socket) Check(context.Context, *Env) (string, error) {
	_, err := os.Stat(s.Path)
	switch {
	case err == nil:
		return "", nil
	case os.IsNotExist(err):
		return "does not exist", nil
	case os.IsPermission(err):
		return "no permission to look at it", nil
	}
	return "", err
}

// ConfigDir is where DEPENDENCY_CONFIG templates are read from: <ConfigDir>/<base>/<base>.
var ConfigDir = "/configmaps"

// ConfigFile renders <ConfigDir>/<base>/<base> (a text/template with .IP, .IP_ERLANG and
// .HOSTNAME) to Path, as upstream's config dependency does; the IP is INTERFACE_NAME's first.
type ConfigFile struct {
	Path          string
	InterfaceName string
}

func (c ConfigFile) String() string { return "Config " + c.Path }

func (c ConfigFile) Check(context.Context, *Env) (string, error) {
	ip, err := interfaceIP(c.InterfaceName)
	if err != nil {
		return "", err
	}
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	base := filepath.Base(c.Path)
	src := filepath.Join(ConfigDir, base, base)
	tmpl, err := template.New(base).Option("missingkey=error").ParseFiles(src)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	params := map[string]string{"IP": ip, "IP_ERLANG": strings.ReplaceAll(ip, ".", ","), "HOSTNAME": host}
	if err := tmpl.Execute(&out, params); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
		return "", err
	}
	return "", os.WriteFile(c.Path, []byte(out.String()), 0o644)
}

func interfaceIP(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%s is not set", EnvInterfaceName)
	}
	iface, err := net.InterfaceByName(name)
	if err != nil {
		return "", err
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return "", err
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("interface %s has no address", name)
	}
	ip, _, _ := strings.Cut(addrs[0].String(), "/")
	return ip, nil
}
