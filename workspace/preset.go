package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/closeddir"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// Names at the top of a writable root that tools run or trust later, outside
// the sandbox (docs/threat-model.md, class 6). They are protected whether or not they exist:
// a file that does not exist yet is the easiest one to plant.
var (
	// AutoExecNames are protected at the top of every writable root (a
	// missing one as a stub) and, but .gitmodules, wherever the scan of
	// the root finds one (NestedNames): files and directories that git,
	// direnv, editors and agents read and obey. docs/threat-model.md,
	// class 6, cites where each tool looks for them.
	AutoExecNames = []string{
		".gitmodules", ".envrc", ".mcp.json",
		".vscode", ".idea", ".claude", ".codex", ".gemini",
		".cursor", ".zed", ".helix", ".nvim.lua", ".nvimrc", ".exrc",
		// GitHub Copilot CLI runs the hooks of .github/hooks/*.json
		// from its working directory; a dev container's
		// initializeCommand runs on the host; opencode and Continue
		// start the MCP servers (and opencode the plugins) their
		// project configuration names.
		".github/hooks", ".devcontainer", "opencode.json", "opencode.jsonc",
		".opencode", ".continue",
		// mise runs a trusted project's configuration ({{exec(...)}}
		// templates, [env] _.source, [hooks]) at every prompt under
		// mise activate, trusting it by path, not content: each name
		// its docs list for a project, and .tool-versions, which mise
		// and asdf read to choose the programs put first on PATH.
		"mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml",
		"mise", ".mise", ".config/mise.toml", ".config/mise.local.toml", ".config/mise",
		".tool-versions",
		// What direnv evaluates through .envrc's use flake, use nix
		// (nix-direnv) and devbox's generated .envrc: a shellHook or
		// init_hook runs at every cd into the project.
		"flake.nix", "shell.nix", "default.nix", "devbox.json",
	}
	// ShellFiles are protected in HOME when a writable root contains it:
	// what a shell, a login, the session bus or the desktop reads code or
	// environment from (docs/threat-model.md, class 6, names the reader
	// of each and when it runs). Those under .config and .local/share are
	// also protected where XDG_CONFIG_HOME and XDG_DATA_HOME put them
	// (homeFiles).
	ShellFiles = []string{
		// shells: login, interactive, logout; readline's key bindings
		// (a macro types a command line)
		".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
		".bash_aliases", ".bashrc.d", ".zshrc", ".zshenv", ".zprofile",
		".zlogin", ".zlogout", ".config/fish", ".inputrc",
		".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout",
		// the login and the X session
		".pam_environment", ".xprofile", ".xsessionrc", ".xsession", ".Xsession",
		".xinitrc", ".xserverrc", ".xinputrc",
		".gitconfig", ".config/git",
		// the user's service manager and session bus: units in every
		// user unit directory under HOME, their environment, D-Bus
		// services activated on demand
		".config/systemd", ".config/environment.d", ".local/share/systemd",
		".local/share/dbus-1",
		// the desktop: autostart entries, KDE's login scripts, which
		// program opens a file, GNOME's settings (custom key bindings
		// name commands) and shell extensions
		".config/autostart", ".config/autostart-scripts", ".config/plasma-workspace",
		".config/mimeapps.list", ".local/share/applications", ".config/dconf",
		".local/share/gnome-shell",
		// on PATH, or imported at every interpreter start (.pth files,
		// usercustomize.py)
		".local/bin", "bin", ".local/lib",
		// editors and multiplexers run code from their config
		".vimrc", ".vim", ".config/nvim", ".emacs", ".emacs.d", ".tmux.conf",
	}
	// NestedNames are AutoExecNames but .gitmodules (git's own, guarded
	// with the repository that holds it): protected in every directory
	// the scan of a writable root reads, where they exist, and refused
	// by the decider as a component of any path written. Its order gives
	// the bits of the scan's record (dirRecord.Conf): a change to it goes
	// with a new scanVersion.
	NestedNames = slices.DeleteFunc(slices.Clone(AutoExecNames), func(n string) bool { return n == ".gitmodules" })
	// CredentialStores under HOME are denied by the workspace preset, in
	// the home the password database names and in $HOME when it differs
	// (docs/threat-model.md, "Credential stores", gives each one's source).
	CredentialStores = []string{
		".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials",
		".docker/config.json", ".kube", ".config/gcloud", ".azure",
		".npmrc", ".pypirc",
		// GitHub's CLI; the agents' sign-ins (see AgentCLI.Credentials)
		".config/gh/hosts.yml",
		".claude/.credentials.json", ".codex/auth.json",
		".gemini/oauth_creds.json", ".gemini/google_accounts.json", ".gemini/mcp-oauth-tokens.json", ".gemini/a2a-oauth-tokens.json",
		".copilot/config.json", ".config/cursor/auth.json",
		// cloud and hosting CLIs
		".oci", ".config/doctl", ".terraform.d/credentials.tfrc.json",
		".config/hcloud", ".fly",
		// password managers and their agents
		".1password", ".config/op", ".password-store", ".local/share/keyrings",
		".config/Bitwarden CLI",
	}
)

// Options tune the workspace preset.
type Options struct {
	// Home is the user's home directory; "" means os.UserHomeDir.
	Home string
	// AllowRead lists credential stores to leave readable.
	AllowRead []string
	// UserHome is the home the password database names for the user;
	// its credential stores are denied as Home's are, so that a launch
	// with HOME unset or elsewhere (HOME=/tmp) still keeps them out. ""
	// means the password database's, looked up (UserHome).
	UserHome string
	// OwnCredentials are credential stores under the homes (names as in
	// CredentialStores) left readable: the sign-in of the agent CLI that
	// runs inside (AgentCLI.Credentials).
	OwnCredentials []string
	// ScanCache, when set, is a private directory (the caller's, mode 0700)
	// where the scan for git repositories keeps what it found between
	// launches; see scancache.go.
	ScanCache string
	// GitWrites lets the sandbox write git metadata (add, commit, branch)
	// except what git runs or obeys as configuration (gitWriteProtected).
	// By default every git directory in the workspace is read-only as a
	// whole; see git.go for why.
	GitWrites bool
	// ConfigHome and DataHome are the host user's XDG_CONFIG_HOME and
	// XDG_DATA_HOME; "" means this process's. Where one is absolute, the
	// ShellFiles under .config or .local/share are protected there as
	// well (a derived root only ever restricts, so one more costs a
	// mount point, never a write the user wanted).
	ConfigHome, DataHome string
}

// Preset compiles the --workspace preset: dir writable, the private
// TMPDIR and cache writable, restrictWrites, auto-executed files and git metadata
// protected at the top of the workspace and in the git repositories found
// in it, and credential stores under HOME denied. dir must be absolute.
func Preset(dir string, opt Options) (policy.FsSandboxPolicy, error) {
	r := policy.NewResolver()
	defer r.Close()
	return preset(r, dir, opt)
}

// preset is Preset looking the host up through r, so that HOME and
// the workspace are looked up once, not per path, and so that Compose's
// later canonicalization sees what the preset saw.
func preset(r *policy.Resolver, dir string, opt Options) (policy.FsSandboxPolicy, error) {
	ws, err := r.Resolve(dir)
	if err != nil {
		return policy.FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
	}
	fi, err := os.Stat(ws)
	if err != nil {
		return policy.FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return policy.FsSandboxPolicy{}, fmt.Errorf("workspace %s: not a directory", dir)
	}
	p := policy.FsSandboxPolicy{
		// The TMPDIR and the cache are made by the launcher: spelled as
		// directories, since a writable root that does not exist yet is
		// otherwise a file (policy.Canonical.FileRoot).
		WritableRoots:  []string{ws, PrivateTmpDir(ws) + "/", PrivateCacheDir(ws) + "/"},
		RestrictWrites: true,
	}
	home := opt.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		lexical := filepath.Clean(home)
		if home, err = r.Resolve(home); err != nil {
			// Its shell files and credential stores would go unprotected:
			// inside the workspace, a sandbox may have closed a directory
			// above it to that end.
			if filepath.IsAbs(lexical) && within(lexical, ws) && !testhook.ClosedUnchecked {
				return policy.FsSandboxPolicy{}, fmt.Errorf("workspace: cannot look up the home directory %s, which lies in the workspace: %s", lexical, closeddir.Hint(lexical, err))
			}
			home = ""
		}
	}
	prot, err := protections(r, ws, home, opt)
	if err != nil {
		return policy.FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
	}
	p.Merge(prot)
	w, ro := platformRoots(r) // macOS: the user's temp and cache folders (userfolders.go)
	p.WritableRoots = append(p.WritableRoots, w...)
	p.ReadonlyRoots = append(p.ReadonlyRoots, ro...)
	homes := storeHomes(r, home, opt.UserHome)
	for _, h := range homes {
		denied, err := credentials(r, h, ws, opt.AllowRead, opt.OwnCredentials)
		if err != nil {
			return policy.FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
		}
		p.DeniedRoots = append(p.DeniedRoots, denied...)
		if within(h, ws) {
			// A store reached through a link in a writable HOME is denied
			// at its target, but the link could be swapped for a real
			// ~/.ssh (authorized_keys) from inside.
			var lexical []string
			for _, n := range CredentialStores {
				lexical = append(lexical, filepath.Join(h, n))
			}
			if err := noLinks(r, lexical); err != nil {
				return policy.FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
			}
		}
	}
	if len(homes) > 0 {
		for _, n := range notStores(r, homes, opt.AllowRead) {
			p.Note("%s", n)
		}
	}
	return p, nil
}

// Protections compiles what guards writable root root as the workspace
// preset guards the workspace (docs/threat-model.md, class 6): its
// auto-executed files, the git metadata in it, and the shell files of
// opt.Home when root contains it. They are derived roots
// (FsSandboxPolicy.Protect): merged into a policy, each restricts only
// where that policy allows writes. A protected name at the top of root
// that is a symlink is an error.
func Protections(root string, opt Options) (policy.FsSandboxPolicy, error) {
	r := policy.NewResolver()
	defer r.Close()
	home := opt.Home
	if home != "" {
		if rh, err := r.Resolve(home); err == nil {
			home = rh
		}
	}
	return protections(r, root, home, opt)
}

func protections(r *policy.Resolver, root, home string, opt Options) (policy.FsSandboxPolicy, error) {
	var q policy.FsSandboxPolicy
	var top []string
	for _, n := range AutoExecNames {
		top = append(top, filepath.Join(root, n))
	}
	for _, p := range homeFiles(r, home, opt) {
		if within(p.base, root) {
			top = append(top, p.path)
		}
	}
	// The names at the top of root are the user's: a sandbox finds them
	// protected from its first launch on, so a link there was not planted.
	// Names inside repositories found by the scan may have been, and a
	// link there is followed only into the root (gitGuard), never refused:
	// a planted link must not stop later launches.
	check := append(top, filepath.Join(root, ".git"))
	if !exists(filepath.Join(root, ".git")) {
		check = append(check, filepath.Join(root, "HEAD"))
	}
	if err := noLinks(r, check); err != nil {
		return q, err
	}
	q.Protect(top...)
	g := &gitGuard{root: root, writes: opt.GitWrites, done: map[string]bool{}}
	if !opt.GitWrites {
		g.cache = loadGuardCache(root, opt.ScanCache)
	}
	g.workTree(root)
	if top := enclosingTop(root); top != "" {
		// Git run in root on the host finds the repository above it
		// (root has no .git of its own, and cannot get one): what that
		// repository's config and .gitmodules name inside root is
		// protected as in a repository of root's own. Its metadata lies
		// outside root, where a derived root restricts nothing.
		g.workTree(top)
	}
	places, cut := cachedScan(root, opt.ScanCache)
	g.places(places)
	g.noteFresh(places)
	g.cache.store()
	if cut {
		kept := "every repository an earlier scan found is still protected"
		if opt.ScanCache == "" {
			kept = "this caller keeps no scan record, so nothing earlier is known"
		}
		g.note("the scan of %s for git repositories stopped at its bound (%d directories, %d entries, %d levels): %s; repositories below what it read may be writable", root, scanDirs, scanEntries, scanDepth, kept)
	}
	if g.refuse != nil {
		return q, g.refuse
	}
	q.Protect(g.roots...)
	for _, n := range g.notes {
		q.Note("%s", n)
	}
	return q, nil
}

// homeFile is one of ShellFiles in the place a reader looks for it, and
// the directory it is named under (HOME, or an XDG base directory).
type homeFile struct{ base, path string }

// homeFiles lists ShellFiles under home and, for those under .config and
// .local/share, under XDG_CONFIG_HOME and XDG_DATA_HOME when they name
// another absolute place (the XDG Base Directory Specification ignores a
// relative one). A base that cannot be resolved is taken as spelled: a
// sandbox may create it.
func homeFiles(r *policy.Resolver, home string, opt Options) []homeFile {
	var out []homeFile
	if home != "" {
		for _, n := range ShellFiles {
			out = append(out, homeFile{home, filepath.Join(home, n)})
		}
	}
	for _, x := range []struct{ value, env, rel string }{
		{opt.ConfigHome, "XDG_CONFIG_HOME", ".config/"},
		{opt.DataHome, "XDG_DATA_HOME", ".local/share/"},
	} {
		v := x.value
		if v == "" {
			v = os.Getenv(x.env)
		}
		if !filepath.IsAbs(v) {
			continue
		}
		base := filepath.Clean(v)
		if rb, err := r.Resolve(base); err == nil {
			base = rb
		}
		if home != "" && base == filepath.Join(home, strings.TrimSuffix(x.rel, "/")) {
			continue
		}
		for _, n := range ShellFiles {
			if rest, ok := strings.CutPrefix(n, x.rel); ok {
				out = append(out, homeFile{base, filepath.Join(base, rest)})
			}
		}
	}
	return out
}

// noLinks refuses protected paths that are symlinks. Canonicalizing would
// protect the link's target, while the link itself, a directory entry in a
// writable root, could be replaced from inside the sandbox by a real file
// that host tools then run.
func noLinks(r *policy.Resolver, paths []string) error {
	for _, p := range paths {
		if _, target, err := r.Lookup(p); err == nil && target != "" {
			return fmt.Errorf("%s is a symlink: cordon protects it, but a link inside a writable root can be swapped for a real file from inside the sandbox; replace the link with what it points to", p)
		}
	}
	return nil
}

// PrivateTmpDir is the TMPDIR given to sandboxes of one workspace: private
// to the user, inside cordon's state directory (internal/state; the
// launcher creates it 0700 and checks its owner) so no other user can
// create it first, and kept out of the workspace so temp files never show
// up in a diff.
func PrivateTmpDir(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(state.Path(), state.Tmp, hex.EncodeToString(sum[:6]))
}

// PrivateCacheDir is the directory of the package and build caches given
// to sandboxes of one workspace (package internal/toolcache says which
// tool gets which part): beside the TMPDIRs, named like them, made, kept
// and tidied like them by the launcher (launcher.Cmd.CacheDir). One per
// workspace, so what a sandbox of one workspace puts in a cache is never
// what a build of another takes.
func PrivateCacheDir(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(state.Path(), state.Cache, hex.EncodeToString(sum[:6]))
}

// Agents compiles the --agents-root preset: the agents root denied, the
// agent's own directory writable, its parent's read-only.
func Agents(root, id, parent string) (policy.FsSandboxPolicy, error) {
	if err := policy.CheckSpelling(root); err != nil {
		return policy.FsSandboxPolicy{}, fmt.Errorf("agents root: %w", err)
	}
	if id == "" {
		return policy.FsSandboxPolicy{}, errors.New("an agent id (--agent ID) is required")
	}
	for _, a := range []struct{ flag, v string }{{"agent", id}, {"parent", parent}} {
		if a.v == "" && a.flag == "parent" {
			continue
		}
		if a.v == "" || a.v == "." || a.v == ".." || strings.ContainsAny(a.v, "/\x00") {
			return policy.FsSandboxPolicy{}, fmt.Errorf("%s id %q: must be one path component", a.flag, a.v)
		}
	}
	if parent == id {
		return policy.FsSandboxPolicy{}, fmt.Errorf("parent id %q: an agent cannot be its own parent", parent)
	}
	p := policy.FsSandboxPolicy{
		DeniedRoots:   []string{root},
		WritableRoots: []string{filepath.Join(root, id) + "/"}, // a directory, made if missing
	}
	if parent != "" {
		p.ReadonlyRoots = []string{filepath.Join(root, parent)}
	}
	return p, nil
}

// NestedNameEnds returns the one of NestedNames that path p ends with,
// whole components ("" when none); with fold, case is ignored. Most are
// one component, .github/hooks is two: matching a component alone would
// miss it.
func NestedNameEnds(p string, fold bool) string {
	for _, n := range NestedNames {
		if len(p) < len(n) {
			continue
		}
		tail := p[len(p)-len(n):]
		if tail != n && (!fold || !strings.EqualFold(tail, n)) {
			continue
		}
		if len(p) == len(n) || p[len(p)-len(n)-1] == '/' {
			return n
		}
	}
	return ""
}
