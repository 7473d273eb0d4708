package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// hostServer is an HTTP server on the host's loopback standing in for a
// registry on the internet; the sandbox reaches it as localhost:PORT
// (a pattern naming it exactly) through cordon's proxy.
func hostServer(t *testing.T, body string) (port string, hits func() int) {
	t.Helper()
	n := 0
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return u.Port(), func() int { return n }
}

// TestRunNetworkAllowlist is the CLI end to end: curl through the proxy to
// an allowed host, a refusal named on stderr with the flag that would
// allow it, and every decision in the audit log, which still verifies.
func TestRunNetworkAllowlist(t *testing.T) {
	testenv.RequireBwrap(t)
	_, err := exec.LookPath("curl")
	testenv.Need(t, "curl", err)
	ws := t.TempDir()
	port, hits := hostServer(t, "registry says hi")
	other, otherHits := hostServer(t, "nobody should see this")
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	code, out, stderr := runCLI(t, "", "run", "--workspace", ws, "--audit", log, "--allow-domain", "localhost:"+port, "--", "sh", "-c",
		`curl -sS --noproxy '' "http://localhost:$0/"; echo; curl -sS --noproxy '' -p "http://localhost:$0/"; echo; curl -sS --noproxy '' "http://localhost:$1/" || echo refused`, port, other)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "registry says hi\nregistry says hi\n", strings.SplitAfterN(out, "\n", 3)[0]+strings.SplitAfterN(out, "\n", 3)[1])
	require.NotContains(t, out, "nobody")
	require.Equal(t, 2, hits())
	require.Equal(t, 0, otherHits())
	want := fmt.Sprintf("cordon: network: refused localhost:%s: no pattern allows it; to allow it: --allow-domain localhost:%s\n", other, other)
	require.Equal(t, 1, strings.Count(stderr, want), stderr)

	code, vout, verr := runCLI(t, "", "audit", "verify", log)
	require.Equal(t, 0, code, vout+verr)
	f, err := os.Open(log)
	require.NoError(t, err)
	defer f.Close()
	var kinds []string
	var nets []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct{ Record audit.Record }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		kinds = append(kinds, l.Record.Kind)
		if l.Record.Kind == audit.KindNetwork {
			var m map[string]any
			require.NoError(t, json.Unmarshal(l.Record.Data, &m))
			nets = append(nets, m)
		}
		if l.Record.Kind == audit.KindLaunch {
			require.Contains(t, string(l.Record.Data), `"networkPolicy":{"allowDomains":["localhost:`+port+`"]}`)
		}
	}
	require.Equal(t, []string{"launch", "network", "network", "network"}, kinds)
	var allowed, refused int
	for _, m := range nets {
		if m["allowed"] == true {
			allowed++
			require.Equal(t, "--allow-domain localhost:"+port, m["rule"])
			require.Greater(t, m["bytesUp"], float64(0))
			require.Greater(t, m["bytesDown"], float64(0))
		} else {
			refused++
			require.Equal(t, "no pattern allows it", m["rule"])
			require.Equal(t, "localhost", m["host"])
		}
	}
	require.Equal(t, 2, allowed)
	require.Equal(t, 1, refused)
}

func TestProfileNetwork(t *testing.T) {
	testenv.RequireBwrap(t)
	code, out, stderr := runCLI(t, "", "profile", "--backend", "bwrap", "--json", "--allow-domain", "@npm", "--deny-domain", "bad.example", "--", "npm", "ci")
	require.Equal(t, 0, code, stderr)
	var r struct {
		Backend string
		Argv    []string
		Seccomp string
		Network struct {
			AllowDomains, DenyDomains []string
			Proxy, Enforcement        string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, []string{"@npm"}, r.Network.AllowDomains)
	require.Equal(t, []string{"bad.example"}, r.Network.DenyDomains)
	require.Equal(t, "http://127.0.0.1:3128", r.Network.Proxy)
	require.Contains(t, r.Network.Enforcement, "--unshare-net")
	require.Contains(t, r.Argv, "--unshare-net")
	require.Equal(t, []string{"__cordon-net-exec", "FD", "3128", "npm", "ci"}, r.Argv[len(r.Argv)-5:])
	require.Contains(t, r.Seccomp, "sockets (network proxy) AF_INET, AF_INET6, AF_NETLINK (NETLINK_ROUTE) only")

	// The native backend's profile says the same of the proxy and shows
	// the filter its launch installs.
	r.Network.Enforcement, r.Seccomp = "", ""
	code, out, stderr = runCLI(t, "", "profile", "--backend", "native", "--json", "--allow-domain", "example.com")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, []string{"example.com"}, r.Network.AllowDomains)
	require.Equal(t, "http://127.0.0.1:3128", r.Network.Proxy)
	require.Contains(t, r.Network.Enforcement, "init makes inside that namespace")
	require.Contains(t, r.Seccomp, "sockets (network proxy) AF_INET, AF_INET6, AF_NETLINK (NETLINK_ROUTE) only")

	// Asked for auto, a launch with an allowlist takes the native backend
	// where it is usable (no helper to start inside), bwrap elsewhere.
	r.Backend = ""
	code, out, stderr = runCLI(t, "", "profile", "--json", "--allow-domain", "example.com")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	if detect.Detect(context.Background(), "native").Usable {
		require.Equal(t, "native", r.Backend)
	} else {
		require.Equal(t, "bwrap", r.Backend)
	}

	code, out, _ = runCLI(t, "", "profile", "--backend", "seatbelt", "--json", "--allow-domain", "example.com")
	require.Equal(t, 0, code)
	require.Contains(t, out, `(allow network-outbound (remote tcp \"localhost:3128\"))`)
	code, _, stderr = runCLI(t, "", "profile", "--network", "on", "--allow-domain", "example.com")
	require.Equal(t, 125, code)
	require.Contains(t, stderr, "--network on and a domain allowlist (example.com)")
}

func TestExplainHosts(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("registry.npmjs.org", nil, 0o644)) // a file of that name: a path
	code, out, stderr := runCLI(t, "", "explain", "--json", "--allow-domain", "@npm", "--allow-domain", "*.corp.example",
		"--deny-domain", "bad.corp.example", "https://registry.npmjs.org/left-pad", "wiki.corp.example:443", "bad.corp.example", "10.0.0.1:22", "registry.npmjs.org")
	require.Equal(t, 0, code, stderr)
	dec := json.NewDecoder(strings.NewReader(out))
	var got []string
	for dec.More() {
		var v map[string]any
		require.NoError(t, dec.Decode(&v))
		if h, ok := v["host"]; ok {
			got = append(got, fmt.Sprintf("%v:%v %v %v", h, v["port"], v["allowed"], v["rule"]))
		} else {
			got = append(got, fmt.Sprintf("path %v", filepath.Base(v["path"].(string))))
		}
	}
	require.Equal(t, []string{
		"registry.npmjs.org:443 true --allow-domain registry.npmjs.org (@npm)",
		"wiki.corp.example:443 true --allow-domain *.corp.example",
		"bad.corp.example:80 false --deny-domain bad.corp.example",
		"bad.corp.example:443 false --deny-domain bad.corp.example",
		"10.0.0.1:22 false no pattern allows it",
		"path registry.npmjs.org",
	}, got)
	code, _, stderr = runCLI(t, "", "explain", "--allow-domain", "x.example", "x.example:99999")
	require.Equal(t, 125, code)
	require.Contains(t, stderr, `"x.example:99999"`)
}
