//go:build linux || darwin

package launcher

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
)

// connectArg runs this program as a relay for ssh's ProxyCommand inside a
// sandbox with a network allowlist: argv HOST PORT. It asks the proxy
// named by HTTPS_PROXY (or HTTP_PROXY) for a CONNECT tunnel to HOST:PORT
// and copies stdin to it and it to stdout, so that git over ssh reaches
// an allowed host (GIT_SSH_COMMAND, see sshCommand). A refusal is the
// proxy's message on stderr and exit status 1.
const connectArg = "__cordon-connect"

func init() {
	if len(os.Args) == 4 && os.Args[1] == connectArg {
		os.Exit(connectMain(os.Args[2], os.Args[3]))
	}
}

func connectMain(host, port string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "cordon: %s: %s\n", connectArg, fmt.Sprintf(format, a...))
		return 1
	}
	p := os.Getenv("HTTPS_PROXY")
	if p == "" {
		p = os.Getenv("HTTP_PROXY")
	}
	u, err := url.Parse(p)
	if p == "" || err != nil || u.Host == "" {
		return fail("no proxy in HTTPS_PROXY or HTTP_PROXY")
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return fail("proxy %s: %v", u.Host, err)
	}
	defer c.Close()
	target := net.JoinHostPort(host, port)
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if u.User != nil {
		pw, _ := u.User.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)) + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		return fail("proxy %s: %v", u.Host, err)
	}
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		return fail("proxy %s: %v", u.Host, err)
	}
	var body []string
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return fail("proxy %s: %v", u.Host, err)
		}
		if strings.TrimSpace(l) == "" {
			break
		}
	}
	if f := strings.Fields(status); len(f) < 2 || f[1] != "200" {
		// The refusal's text is the body (Content-Length bytes, small).
		b, _ := io.ReadAll(io.LimitReader(br, 4096))
		body = append(body, strings.TrimSpace(string(b)))
		return fail("%s: %s", target, strings.Join(append([]string{strings.TrimSpace(status)}, body...), ": "))
	}
	done := make(chan struct{})
	go func() {
		io.Copy(c, os.Stdin)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	go func() { io.Copy(os.Stdout, br); close(done) }()
	<-done
	return 0
}

// sshCommand is GIT_SSH_COMMAND for a sandbox with a network allowlist:
// ssh with this program as its ProxyCommand, so that git over ssh goes
// through the proxy like everything else.
func sshCommand(exe string) string {
	return "ssh -o ProxyCommand='" + strings.ReplaceAll(exe, "'", `'\''`) + " " + connectArg + " %h %p'"
}
