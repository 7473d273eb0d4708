package launcher

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/netproxy"
)

// echoHTTP answers every connection with one fixed HTTP response.
func echoHTTP(t *testing.T, body string) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				c.Read(buf)
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestNetPolicyAPI is the Go API of the allowlist: NetEvent sees each
// decision; without it a refusal is one line on Stderr, written safely
// beside the sandbox's own output (CombinedOutput, under -race).
func TestNetPolicyAPI(t *testing.T) {
	testenv.RequireBwrap(t)
	_, err := exec.LookPath("curl")
	testenv.Need(t, "curl", err)
	port := echoHTTP(t, "ok from the host")
	np, err := netpolicy.New([]string{"localhost:" + strconv.Itoa(port)}, nil)
	require.NoError(t, err)
	ws := t.TempDir()
	script := `curl -sS --noproxy '' "http://localhost:$0/"; echo; curl -sS --noproxy '' "http://localhost:$1/"; echo`

	var mu sync.Mutex
	var evs []netproxy.Event
	cmd := Command(workspacePolicy(t, ws), "sh", "-c", script, strconv.Itoa(port), "1")
	cmd.NetPolicy = np
	// The allowed connection's event, which the proxy sends when that
	// connection ends, is held until the second request's refusal has
	// been sent: the order a loaded machine gave twice in CI-like runs,
	// made certain.
	refused := make(chan struct{})
	var once sync.Once
	testhook.NetEmit = func(allowed bool) {
		if !allowed {
			once.Do(func() { close(refused) })
			return
		}
		select {
		case <-refused:
		case <-time.After(10 * time.Second):
		}
	}
	t.Cleanup(func() { testhook.NetEmit = nil })
	cmd.NetEvent = func(e netproxy.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	require.NoError(t, err)
	mu.Lock()
	why := fmt.Sprintf("stdout %q\nstderr %q\nstate %v\nevents %+v", out, errb.String(), cmd.ProcessState, evs)
	mu.Unlock()
	require.True(t, strings.HasPrefix(string(out), "ok from the host\n"), "%s", why)
	// In either order: the allowed connection's event comes when it ends,
	// which the proxy may see after the second request's refusal (seen
	// twice in CI-like runs on a loaded machine).
	require.Len(t, evs, 2, why)
	yes, no := evs[0], evs[1]
	if !yes.Allowed {
		yes, no = no, yes
	}
	require.True(t, yes.Allowed, why)
	require.Equal(t, "localhost", yes.Host, why)
	require.Positive(t, yes.Down, why)
	require.False(t, no.Allowed, why)
	require.Equal(t, 1, no.Port, why)

	cmd = Command(workspacePolicy(t, ws), "sh", "-c", script, strconv.Itoa(port), "1")
	cmd.NetPolicy = np
	both, err := cmd.CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(both), "ok from the host")
	require.Contains(t, string(both), "cordon: network: refused localhost:1: no pattern allows it; to allow it: --allow-domain localhost:1\n")

	cmd = Command(workspacePolicy(t, ws), "true")
	cmd.NetPolicy, cmd.Network = np, true
	require.ErrorContains(t, cmd.Run(), "cannot be combined")
	cmd = Command(workspacePolicy(t, ws), "true")
	cmd.NetPolicy, cmd.Backend = np, BackendNone
	require.ErrorContains(t, cmd.Run(), "needs a sandbox")
	cmd = Command(workspacePolicy(t, ws), "true")
	cmd.NetPolicy = &netpolicy.Policy{}
	require.ErrorContains(t, cmd.Run(), "allows no host")
}

// TestNetPolicyHelperUnreadable: when the sandbox cannot run this
// program, which sets the proxy up inside, the launch fails naming it
// rather than running without a network it was promised.
func TestNetPolicyHelperUnreadable(t *testing.T) {
	testenv.RequireBwrap(t)
	exe, err := selfHelper(mustCanon(t, workspacePolicy(t, t.TempDir())))
	require.NoError(t, err)
	p := workspacePolicy(t, t.TempDir())
	p.DeniedRoots = append(p.DeniedRoots, exe)
	np, err := netpolicy.New([]string{"example.com"}, nil)
	require.NoError(t, err)
	cmd := Command(p, "true")
	cmd.NetPolicy = np
	err = cmd.Run()
	require.Error(t, err)
	require.Contains(t, err.Error(), "not readable inside the sandbox")
	var ee *exec.ExitError
	require.False(t, errors.As(err, &ee))
}
