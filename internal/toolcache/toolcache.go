// Package toolcache says where package managers and build tools keep their
// caches inside a sandbox of the workspace preset: in a private directory
// per workspace, in cordon's state directory, never in the host's own
// caches (docs/design.md, "Private caches").
//
// A host cache is what the host's own builds trust: a sandbox that wrote
// ~/.cache/go-build or ~/go/pkg/mod could put its code into the user's
// next build outside any sandbox. So the host's caches stay read-only, and
// each tool is pointed, through its own environment variable, at a
// directory of the workspace's private cache (Env). The host's Go module
// cache is still offered, read-only, as the first GOPROXY entry: a module
// the host has is found offline, and is verified against go.sum and the
// checksum database as any download is.
package toolcache

import (
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/boundedread"
)

// Var is one tool's cache variable: the sandbox's NAME is DIR/Sub.
type Var struct {
	Name string
	Sub  string
	// Tool is who reads it, for the guide and the notes.
	Tool string
}

// Vars are the variables Env sets. XDG_CACHE_HOME is not among them: the
// agent CLIs keep there, under names mapped one by one, what they run at
// their next start (~/.cache/copilot holds Copilot's own code), so moving
// it would hand that to the sandbox to rewrite, and hide the rest.
// CARGO_HOME moves cargo's whole home (its registry and git caches, the
// programs 'cargo install' puts there); cargo still reads the
// configuration of every .cargo directory above the working directory,
// ~/.cargo/config.toml included when the work lies under HOME, but not
// ~/.cargo/credentials.toml, which a sandbox has no need of.
var Vars = []Var{
	{"GOCACHE", "go-build", "go (build and test cache)"},
	{"GOMODCACHE", "go-mod", "go (module cache)"},
	{"npm_config_cache", "npm", "npm, npx"},
	{"YARN_CACHE_FOLDER", "yarn", "yarn"},
	{"npm_config_store_dir", "pnpm-store", "pnpm (store)"},
	{"BUN_INSTALL_CACHE_DIR", "bun", "bun"},
	{"PIP_CACHE_DIR", "pip", "pip"},
	{"UV_CACHE_DIR", "uv", "uv"},
	{"POETRY_CACHE_DIR", "poetry", "poetry"},
	{"CARGO_HOME", "cargo", "cargo"},
	{"DENO_DIR", "deno", "deno"},
	{"CCACHE_DIR", "ccache", "ccache"},
}

// Env returns env with each of Vars pointing into dir, the workspace's
// private cache, unless env already gives it an absolute path that
// writable reports the sandbox may write: the user's own choice (a cache
// in the workspace, 'cordon run --env GOCACHE=...') stands, while one that
// names a read-only place (the host's cache, as a profile may export it)
// would only fail, and is replaced. With GOMODCACHE private, GOPROXY
// gets the host's module cache first (goProxy).
func Env(env []string, dir string, writable func(string) bool) []string {
	proxy := goProxy(env) // from the host's GOMODCACHE, before it is replaced
	goMod := false
	for _, v := range Vars {
		if cur := lookup(env, v.Name); filepath.IsAbs(cur) && writable(filepath.Clean(cur)) {
			continue
		}
		env = set(env, v.Name, filepath.Join(dir, v.Sub))
		goMod = goMod || v.Name == "GOMODCACHE"
	}
	if goMod && proxy != "" {
		env = set(env, "GOPROXY", proxy)
	}
	return env
}

// goProxy is the GOPROXY that offers the host's module cache (its
// cache/download, the layout a file:// proxy serves) before the user's
// own list, "" when the host has none. A module found there is a module
// the host downloaded and verified; the sandbox's go verifies it again
// (go.sum, GOSUMDB) and copies it into its private cache. The user's
// "off" stays last, so it still forbids downloads.
func goProxy(env []string) string {
	host := HostGoModCache(env)
	if host == "" {
		return ""
	}
	dl := filepath.Join(host, "cache", "download")
	if fi, err := os.Stat(dl); err != nil || !fi.IsDir() {
		return ""
	}
	first := (&url.URL{Scheme: "file", Path: dl}).String()
	user := goEnv(env, "GOPROXY")
	if user == "" {
		user = "https://proxy.golang.org,direct" // as $GOROOT/go.env says
	}
	if strings.HasPrefix(user, first) {
		return ""
	}
	return first + "," + user
}

// HostGoModCache is the host's Go module cache as the go command finds it
// from env (GOMODCACHE, else the first GOPATH entry's pkg/mod, else
// ~/go/pkg/mod), each from the go env file when env does not set it.
func HostGoModCache(env []string) string {
	if d := goEnv(env, "GOMODCACHE"); filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	if gp := goEnv(env, "GOPATH"); gp != "" {
		if first := filepath.SplitList(gp)[0]; filepath.IsAbs(first) {
			return filepath.Join(first, "pkg", "mod")
		}
		return ""
	}
	if home := homeOf(env); home != "" {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// HostDirs are the host's own caches of the tools in Vars, where env says
// they are (or where each tool puts them by default): the places the
// workspace preset keeps read-only even inside a writable root (HOME as
// the workspace), so no sandbox writes what a host build then trusts.
func HostDirs(env []string) []string {
	home := homeOf(env)
	if home == "" {
		return nil
	}
	cache := filepath.Join(home, ".cache")
	data := filepath.Join(home, ".local", "share")
	if runtime.GOOS == "darwin" {
		cache = filepath.Join(home, "Library", "Caches")
		data = filepath.Join(home, "Library")
	} else {
		if x := lookup(env, "XDG_CACHE_HOME"); filepath.IsAbs(x) {
			cache = filepath.Clean(x)
		}
		if x := lookup(env, "XDG_DATA_HOME"); filepath.IsAbs(x) {
			data = filepath.Clean(x)
		}
	}
	cargo := filepath.Join(home, ".cargo")
	if c := lookup(env, "CARGO_HOME"); filepath.IsAbs(c) {
		cargo = filepath.Clean(c)
	}
	dirs := []string{
		filepath.Join(cache, "go-build"),
		filepath.Join(home, ".npm"),
		filepath.Join(cache, "yarn"),
		filepath.Join(home, ".yarn", "berry", "cache"),
		filepath.Join(data, "pnpm", "store"),
		filepath.Join(home, ".bun", "install", "cache"),
		filepath.Join(cache, "pip"),
		filepath.Join(cache, "uv"),
		filepath.Join(cache, "pypoetry"),
		filepath.Join(cargo, "registry"),
		filepath.Join(cargo, "git"),
		filepath.Join(cache, "deno"),
		filepath.Join(cache, "ccache"),
		filepath.Join(home, ".ccache"),
	}
	if d := goEnv(env, "GOCACHE"); filepath.IsAbs(d) {
		dirs = append(dirs, filepath.Clean(d))
	}
	if d := HostGoModCache(env); d != "" {
		dirs = append(dirs, d)
	}
	for _, v := range Vars {
		if d := lookup(env, v.Name); filepath.IsAbs(d) && v.Name != "CARGO_HOME" {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	return dirs
}

// goEnv is the go command's variable name from env, else from the go env
// file ('go env -w'), "" when neither sets it.
func goEnv(env []string, name string) string {
	if v := lookup(env, name); v != "" {
		return v
	}
	file := lookup(env, "GOENV")
	if file == "off" {
		return ""
	}
	if file == "" {
		cfg := lookup(env, "XDG_CONFIG_HOME")
		if !filepath.IsAbs(cfg) {
			home := homeOf(env)
			if home == "" {
				return ""
			}
			cfg = filepath.Join(home, ".config")
			if runtime.GOOS == "darwin" {
				cfg = filepath.Join(home, "Library", "Application Support")
			}
		}
		file = filepath.Join(cfg, "go", "env")
	}
	// The go command's own bound on the file is none; one this size holds
	// every variable there is many times over.
	b, err := boundedread.File(file, 64<<10, true)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+"="); ok {
			return v
		}
	}
	return ""
}

func homeOf(env []string) string {
	if h := lookup(env, "HOME"); filepath.IsAbs(h) {
		return filepath.Clean(h)
	}
	return ""
}

// lookup is the value of name in env, the last of duplicates, as os/exec
// keeps the last.
func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, name+"="); ok {
			v = rest
		}
	}
	return v
}

// set returns env with name=val in place of every earlier name.
func set(env []string, name, val string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+val)
}
