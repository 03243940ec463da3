// agent is the one program of the real-cluster test's image (built static, CGO_ENABLED=0):
//
//	agent serve ADDR          answer every HTTP request with "kupenstack-agent <hostname>"
//	agent files DIR ADDR      serve the files under DIR (a chart repository for the operator)
//	agent check CHECK...      run each check, print "ok CHECK detail" or "FAIL CHECK reason",
//	                          exit 1 when one failed
//
// Checks: get=URL (HTTP 200 from an agent), resolve=NAME=IP (NAME resolves to IP), tcp=HOST:PORT
// (a connection opens), notcp=HOST:PORT (no connection within 3 s), noresolve=NAME (NAME does not
// resolve). defaultroute=IP is no check but a step: it adds a default route through IP (the pod
// needs NET_ADMIN), so that what follows tests the host's firewall, not the missing route.
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: agent serve ADDR | agent check CHECK...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		host, _ := os.Hostname()
		err := http.ListenAndServe(os.Args[2], http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "kupenstack-agent %s\n", host)
		}))
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	case "files":
		fmt.Fprintln(os.Stderr, http.ListenAndServe(os.Args[3], http.FileServer(http.Dir(os.Args[2]))))
		os.Exit(1)
	case "check":
		failed := false
		for _, c := range os.Args[2:] {
			detail, err := check(c)
			if err != nil {
				failed = true
				fmt.Printf("FAIL %s %v\n", c, err)
				continue
			}
			fmt.Printf("ok %s %s\n", c, detail)
		}
		if failed {
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

func check(c string) (string, error) {
	kind, arg, _ := strings.Cut(c, "=")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch kind {
	case "get":
		client := http.Client{Timeout: 10 * time.Second}
		resp, err := client.Get(arg)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "kupenstack-agent ") {
			return "", fmt.Errorf("HTTP %d %q", resp.StatusCode, body)
		}
		return strings.TrimSpace(string(body)), nil
	case "resolve":
		name, want, _ := strings.Cut(arg, "=")
		addrs, err := net.DefaultResolver.LookupHost(ctx, name)
		if err != nil {
			return "", err
		}
		if !slices.Contains(addrs, want) {
			return "", fmt.Errorf("resolves to %v, want %s", addrs, want)
		}
		return strings.Join(addrs, ","), nil
	case "noresolve":
		addrs, err := net.DefaultResolver.LookupHost(ctx, arg)
		if err == nil {
			return "", fmt.Errorf("resolves to %v", addrs)
		}
		return err.Error(), nil
	case "tcp", "notcp":
		conn, err := net.DialTimeout("tcp", arg, 3*time.Second)
		if kind == "tcp" {
			if err != nil {
				return "", err
			}
			conn.Close()
			return "connected", nil
		}
		if err == nil {
			conn.Close()
			return "", fmt.Errorf("connected to %s", arg)
		}
		return err.Error(), nil
	case "defaultroute":
		gw := net.ParseIP(arg).To4()
		if gw == nil {
			return "", fmt.Errorf("not an IPv4 address: %q", arg)
		}
		if err := addDefaultRoute(gw); err != nil {
			return "", err
		}
		return "added", nil
	}
	return "", fmt.Errorf("unknown check %q", kind)
}

// addDefaultRoute adds "default via gw" to the main table with one rtnetlink request (no
// dependency, no ip binary in the image).
func addDefaultRoute(gw net.IP) error {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW, syscall.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	// struct rtmsg, then the attribute RTA_GATEWAY.
	body := []byte{syscall.AF_INET, 0, 0, 0, syscall.RT_TABLE_MAIN, syscall.RTPROT_BOOT,
		syscall.RT_SCOPE_UNIVERSE, syscall.RTN_UNICAST, 0, 0, 0, 0}
	attr := make([]byte, 8)
	binary.NativeEndian.PutUint16(attr[0:], 8)
	binary.NativeEndian.PutUint16(attr[2:], syscall.RTA_GATEWAY)
	copy(attr[4:], gw)
	body = append(body, attr...)
	msg := make([]byte, syscall.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], syscall.RTM_NEWROUTE)
	binary.NativeEndian.PutUint16(msg[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_ACK|syscall.NLM_F_CREATE|syscall.NLM_F_EXCL)
	binary.NativeEndian.PutUint32(msg[8:], 1) // sequence number
	copy(msg[syscall.NLMSG_HDRLEN:], body)
	if err := syscall.Sendto(fd, msg, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	if n < syscall.NLMSG_HDRLEN+4 || binary.NativeEndian.Uint16(buf[4:]) != syscall.NLMSG_ERROR {
		return fmt.Errorf("unexpected netlink answer (%d bytes)", n)
	}
	if errno := int32(binary.NativeEndian.Uint32(buf[syscall.NLMSG_HDRLEN:])); errno != 0 {
		return syscall.Errno(-errno)
	}
	return nil
}
