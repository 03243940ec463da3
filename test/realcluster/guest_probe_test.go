package realcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/crypto/ssh"
)

// guestProbe runs shell scripts on a guest over SSH (root, the KeyPair's key, the host key its
// console printed), keeping one connection and dialing again after any failure.
type guestProbe struct {
	addr    string
	hostKey ssh.PublicKey
	signer  ssh.Signer
	client  *ssh.Client
}

func (p *guestProbe) Close() {
	if p.client != nil {
		p.client.Close()
		p.client = nil
	}
}

// run runs script and returns its output, whatever its exit status; a session that has not ended
// within d is given up (and the connection with it), so a stalled probe never stalls the test.
func (p *guestProbe) run(ctx context.Context, script string, d time.Duration) (string, error) {
	if p.client == nil {
		c, err := dialGuest(ctx, p.addr, p.hostKey, p.signer)
		if err != nil {
			return "", err
		}
		p.client = c
	}
	sess, err := p.client.NewSession()
	if err != nil {
		p.Close()
		return "", err
	}
	defer sess.Close()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := sess.Output(script)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		var exit *ssh.ExitError
		if r.err != nil && !errors.As(r.err, &exit) {
			p.Close()
			return "", r.err
		}
		return string(r.out), nil
	case <-time.After(d):
		p.Close()
		return "", fmt.Errorf("%s: the probe's session did not end within %s", p.addr, d)
	case <-ctx.Done():
		p.Close()
		return "", ctx.Err()
	}
}

// dialGuest is an SSH client to root@addr with signer, the guest offering hostKey.
func dialGuest(ctx context.Context, addr string, hostKey ssh.PublicKey, signer ssh.Signer) (*ssh.Client, error) {
	conn, err := externalDialer(10*time.Second).DialContext(ctx, "tcp", net.JoinHostPort(addr, "22"))
	if err != nil {
		return nil, err
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), HostKeyAlgorithms: []string{ssh.KeyAlgoED25519}, Timeout: 10 * time.Second})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return ssh.NewClient(sc, chans, reqs), nil
}
