package toolcache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func value(env []string, name string) string { return lookup(env, name) }

func TestEnvPointsEachToolIntoThePrivateCache(t *testing.T) {
	home := t.TempDir()
	dl := filepath.Join(home, "go", "pkg", "mod", "cache", "download")
	require.NoError(t, os.MkdirAll(dl, 0o755))
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + t.TempDir(), "GOCACHE=" + filepath.Join(home, ".cache", "go-build")}
	out := Env(env, "/private", func(string) bool { return false })
	for _, v := range Vars {
		require.Equal(t, filepath.Join("/private", v.Sub), value(out, v.Name), v.Name)
		n := 0
		for _, kv := range out {
			if strings.HasPrefix(kv, v.Name+"=") {
				n++
			}
		}
		require.Equal(t, 1, n, v.Name+" once")
	}
	require.Equal(t, "file://"+dl+",https://proxy.golang.org,direct", value(out, "GOPROXY"))
}

func TestEnvKeepsAWritableChoice(t *testing.T) {
	env := []string{"HOME=/nonexistent", "GOCACHE=/ws/.gocache", "PIP_CACHE_DIR=relative", "npm_config_cache=/host/npm"}
	out := Env(env, "/private", func(p string) bool { return strings.HasPrefix(p, "/ws/") })
	require.Equal(t, "/ws/.gocache", value(out, "GOCACHE"), "the user's cache in the workspace stands")
	require.Equal(t, "/private/pip", value(out, "PIP_CACHE_DIR"), "a relative path is no choice of a place")
	require.Equal(t, "/private/npm", value(out, "npm_config_cache"), "a read-only cache would only fail")
	require.Empty(t, value(out, "GOPROXY"), "no host module cache: the user's GOPROXY as it was")
}

func TestGoProxyFromTheGoEnvFile(t *testing.T) {
	home, cfg := t.TempDir(), t.TempDir()
	mod := filepath.Join(t.TempDir(), "mod")
	require.NoError(t, os.MkdirAll(filepath.Join(mod, "cache", "download"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(cfg, "go"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "go", "env"), []byte("GOPROXY=https://mirror.example/go,off\nGOMODCACHE="+mod+"\n"), 0o644))
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + cfg}
	require.Equal(t, mod, HostGoModCache(env))
	out := Env(env, "/private", func(string) bool { return false })
	require.Equal(t, "file://"+filepath.Join(mod, "cache", "download")+",https://mirror.example/go,off", value(out, "GOPROXY"))
	require.Contains(t, HostDirs(env), mod)
}

func TestHostDirs(t *testing.T) {
	env := []string{"HOME=/h", "XDG_CACHE_HOME=/xc", "GOPATH=/gp:/other", "CARGO_HOME=/c", "GOENV=off"}
	dirs := HostDirs(env)
	for _, d := range []string{"/xc/go-build", "/gp/pkg/mod", "/h/.npm", "/xc/pip", "/c/registry", "/c/git"} {
		require.Contains(t, dirs, d)
	}
	require.Nil(t, HostDirs([]string{"HOME=relative"}))
}
