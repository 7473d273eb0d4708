package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// Real tools through the proxy, each against a local stand-in for its
// registry on the host. The stand-ins are named under .localhost (the
// proxy resolves those to the host's loopback itself) by patterns that
// name them exactly, so the proxy may connect to loopback. The scripts
// empty NO_PROXY first: it names localhost, and a name under it would
// otherwise bypass the proxy (and reach only the sandbox's own loopback).

// envToolsBackend names the backend the tools run through ("": auto):
// CORDON_TOOLS_BACKEND=landlock runs them where each connect is decided
// by cordon's connect gate.
const envToolsBackend = "CORDON_TOOLS_BACKEND"

// needTool skips, saying why, when program is not installed.
func needTool(t *testing.T, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	testenv.Need(t, program+" (a real client to run through the proxy)", err)
	return p
}

// serve runs h on the host's loopback and returns its port.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return u.Port()
}

// runProxied runs script in a sandbox whose allowlist is allow, with ws
// the workspace and the working directory.
func runProxied(t *testing.T, ws, allow, script string) (string, string) {
	t.Helper()
	out, stderr := runProxiedRefusing(t, ws, allow, script)
	require.NotContains(t, stderr, "cordon: network: refused", "the tool asked for a host the test did not allow")
	return out, stderr
}

// runProxiedRefusing is runProxied for a script that is refused some
// host on purpose.
func runProxiedRefusing(t *testing.T, ws, allow, script string) (string, string) {
	t.Helper()
	args := []string{"run", "--workspace", ws, "--allow-domain", allow}
	if b := os.Getenv(envToolsBackend); b != "" {
		args = append(args, "--backend", b)
	}
	code, out, stderr := runCLI(t, "", append(args, "--", "sh", "-c",
		"export NO_PROXY= no_proxy=\ncd \"$0\"\n"+script, ws)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	return out, stderr
}

func TestToolGitClone(t *testing.T) {
	testenv.RequireBwrap(t)
	git := needTool(t, "git")
	root := t.TempDir()
	src := filepath.Join(root, "src")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", src},
		{"-C", src, "-c", "user.name=c", "-c", "user.email=c@example.invalid", "commit", "-q", "--allow-empty", "-m", "from the host"},
		{"clone", "-q", "--bare", src, filepath.Join(root, "repo.git")},
	} {
		out, err := exec.Command(git, args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	port := serve(t, &cgi.Handler{Path: git, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	ws := t.TempDir()
	out, _ := runProxied(t, ws, "git.localhost:"+port,
		`git clone -q "http://git.localhost:`+port+`/repo.git" clone && git -C clone log --format=%s`)
	require.Equal(t, "from the host\n", out)
}

// goProxy serves one module, example.com/hello v1.0.0, as GOPROXY does.
func goProxy(t *testing.T) http.Handler {
	const mod = "module example.com/hello\n\ngo 1.21\n"
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{"go.mod": mod, "hello.go": "package hello\n\nconst Hello = \"hello\"\n"} {
		w, err := zw.Create("example.com/hello@v1.0.0/" + name)
		require.NoError(t, err)
		io.WriteString(w, body)
	}
	require.NoError(t, zw.Close())
	files := map[string]string{
		"/example.com/hello/@v/list":        "v1.0.0\n",
		"/example.com/hello/@v/v1.0.0.info": `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`,
		"/example.com/hello/@v/v1.0.0.mod":  mod,
		"/example.com/hello/@v/v1.0.0.zip":  zb.String(),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, b)
	})
}

func TestToolGoModDownload(t *testing.T) {
	testenv.RequireBwrap(t)
	gobin := needTool(t, "go")
	port := serve(t, goProxy(t))
	ws := t.TempDir()
	out, _ := runProxied(t, ws, "goproxy.localhost:"+port, `
export GOPROXY=http://goproxy.localhost:`+port+` GOSUMDB=off GOTOOLCHAIN=local GOFLAGS=-modcacherw
export GOPATH="$PWD/gopath" GOMODCACHE="$PWD/modcache" GOCACHE="$PWD/gocache"
"`+gobin+`" mod download -json example.com/hello@v1.0.0`)
	var r struct{ Version, Dir, Error string }
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Empty(t, r.Error)
	require.Equal(t, "v1.0.0", r.Version)
	b, err := os.ReadFile(filepath.Join(r.Dir, "hello.go"))
	require.NoError(t, err)
	require.Contains(t, string(b), `const Hello = "hello"`)
}

// wheel is a minimal pure-Python wheel of package cordonprobe 1.0.
func wheel(t *testing.T) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	var record strings.Builder
	for _, f := range []struct{ name, body string }{
		{"cordonprobe/__init__.py", "HELLO = 'hello'\n"},
		{"cordonprobe-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: cordonprobe\nVersion: 1.0\n"},
		{"cordonprobe-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: cordon-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	} {
		w, err := zw.Create(f.name)
		require.NoError(t, err)
		io.WriteString(w, f.body)
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("cordonprobe-1.0.dist-info/RECORD,,\n")
	w, err := zw.Create("cordonprobe-1.0.dist-info/RECORD")
	require.NoError(t, err)
	io.WriteString(w, record.String())
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func TestToolPipDownload(t *testing.T) {
	testenv.RequireBwrap(t)
	py := needTool(t, "python3")
	if out, err := exec.Command(py, "-m", "pip", "--version").CombinedOutput(); err != nil {
		testenv.Need(t, "pip", fmt.Errorf("%v: %s", err, out))
	}
	whl := wheel(t)
	sum := sha256.Sum256(whl)
	const name = "cordonprobe-1.0-py3-none-any.whl"
	port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/cordonprobe/":
			fmt.Fprintf(w, `<html><body><a href="/files/%s#sha256=%s">%s</a></body></html>`, name, hex.EncodeToString(sum[:]), name)
		case "/files/" + name:
			w.Write(whl)
		default:
			http.NotFound(w, r)
		}
	}))
	ws := t.TempDir()
	runProxied(t, ws, "pypi.localhost:"+port, `"`+py+`" -m pip download --disable-pip-version-check --no-cache-dir --no-deps -q `+
		`--index-url http://pypi.localhost:`+port+`/simple/ --trusted-host pypi.localhost:`+port+` -d dl cordonprobe==1.0`)
	b, err := os.ReadFile(filepath.Join(ws, "dl", name))
	require.NoError(t, err)
	require.Equal(t, whl, b)
}

// npmTarball is package cordon-probe 1.0.0 as npm packs it.
func npmTarball(t *testing.T) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"package/package.json": `{"name":"cordon-probe","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     "module.exports = 'hello';\n",
	} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}))
		io.WriteString(tw, body)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return b.Bytes()
}

func TestToolNpmInstall(t *testing.T) {
	testenv.RequireBwrap(t)
	npm := needTool(t, "npm")
	needTool(t, "node")
	tgz := npmTarball(t)
	s1 := sha1.Sum(tgz)
	s512 := sha512.Sum512(tgz)
	var port string
	port = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cordon-probe":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"name":"cordon-probe","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"cordon-probe","version":"1.0.0",`+
				`"dist":{"tarball":"http://npm.localhost:%s/cordon-probe/-/cordon-probe-1.0.0.tgz","shasum":"%s","integrity":"sha512-%s"}}}}`,
				port, hex.EncodeToString(s1[:]), base64.StdEncoding.EncodeToString(s512[:]))
		case "/cordon-probe/-/cordon-probe-1.0.0.tgz":
			w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	}))
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"name":"app","version":"1.0.0","private":true}`), 0o644))
	runProxied(t, ws, "npm.localhost:"+port, `"`+npm+`" install --no-audit --no-fund --no-update-notifier --cache "$PWD/.npm-cache" `+
		`--registry http://npm.localhost:`+port+`/ cordon-probe@1.0.0 >/dev/null`)
	b, err := os.ReadFile(filepath.Join(ws, "node_modules", "cordon-probe", "index.js"))
	require.NoError(t, err)
	require.Equal(t, "module.exports = 'hello';\n", string(b))
}

// TestToolSSHRelay: GIT_SSH_COMMAND inside runs ssh with cordon as its
// ProxyCommand; the relay reaches an allowed host:port through the
// proxy (an echo server stands in for sshd) and names a refused one.
func TestToolSSHRelay(t *testing.T) {
	testenv.RequireBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	exe, err := os.Executable()
	require.NoError(t, err)
	ws := t.TempDir()
	out, _ := runProxiedRefusing(t, ws, "ssh.localhost:"+port, `
echo "$GIT_SSH_COMMAND"
echo 'SSH-2.0-probe' | "`+exe+`" __cordon-connect ssh.localhost `+port+`
"`+exe+`" __cordon-connect other.localhost `+port+` </dev/null 2>&1 || echo refused`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	require.Equal(t, "ssh -o ProxyCommand='"+exe+" __cordon-connect %h %p'", lines[0])
	require.Equal(t, "SSH-2.0-probe", lines[1])
	require.Contains(t, lines[2], "refused other.localhost:"+port)
	require.Equal(t, "refused", lines[3])
}
