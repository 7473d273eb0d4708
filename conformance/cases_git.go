package conformance

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Classes 11, 12 and 14 for git: an attacker launch writes what git reads
// (or what the next launch derives its policy from); then the user's own
// git on the host, or a second launch, runs. Judged by the host: the
// planted command would create the marker $FIX/pwned, outside the
// workspace, where no sandbox can write.

// plant is a shell fragment, run inside the sandbox, that defines the
// command planted in git's configuration and a config file carrying it.
const plant = `P="touch $FIX/pwned"
evilconf() { printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = %s\n\tworktree = %s\n[alias]\n\tst = !%s\n' "$P" "${1:-.}" "$P"; }
evilhook() { mkdir -p "$1" && printf '#!/bin/sh\n%s\n' "$P" > "$1/$2" && chmod +x "$1/$2"; }
`

// AsUser runs sh -c script on the host, in dir, as the case's user, as
// the user would after the sandbox: it does not fail the case on a
// non-zero exit (a refused git command is an outcome, not an error).
func (h *H) AsUser(dir, script string) Output {
	h.handOver()
	cmd := exec.CommandContext(h.ctx, "/bin/sh", "-c", script)
	cmd.Dir = h.Path(dir)
	cmd.Env = h.env(nil)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if !h.User.Invoker {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(h.User.Uid), Gid: uint32(h.User.Gid), Groups: []uint32{}}
	}
	ownGroup(cmd)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	o := Output{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		o.Code = ee.ExitCode()
	} else if err != nil {
		h.Fatalf("host: %s: %v", script, err)
	}
	return o
}

// gitRepo makes a repository with one commit at rel.
func (h *H) gitRepo(rel string) {
	h.Mkdir(rel)
	h.Host(rel, "git", "init", "-q")
	h.Write(rel+"/README", "hello\n")
	h.Host(rel, "git", "add", "README")
	h.Host(rel, "git", "commit", "-q", "-m", "init")
}

// closedLaunch launches script under p from dir (the workspace when ""),
// where cordon may refuse to launch because a directory the policy must
// look into is closed to the user: a refusal that says so passes, as does
// a launch whose attempts all fail (the case's Refuse).
func (h *H) closedLaunch(p Policy, dir, script string) Output {
	l := h.Script(p, script)
	if dir != "" {
		l.Dir = dir
	}
	l.Refusable = "closed to you"
	return h.Launch(l)
}

// NotPwned fails if the planted command ran on the host.
func (h *H) NotPwned(after ...Output) {
	if h.Exists("pwned") {
		var b strings.Builder
		for _, o := range after {
			b.WriteString(o.String())
		}
		h.Errorf("host: a command planted by the sandbox ran on the host (%s exists)\n%s", h.Path("pwned"), b.String())
	}
}

// hostGit is what the user does next on the host, in the workspace.
const hostGit = `git status >/dev/null 2>&1; git diff >/dev/null 2>&1; git st >/dev/null 2>&1; git commit -q --allow-empty -m next >/dev/null 2>&1; git worktree list >/dev/null 2>&1; true`

// gitPlant is the shape of most host-tools cases for git: a fixture, a
// script the sandbox runs (after plant) to write what git reads, the
// marks of that script that must be refused, and what the user then runs
// on the host, where the planted command must not run.
type gitPlant struct {
	name, summary string
	// gitWrites adds the case NAME-git-writes, launched with
	// --allow-git-writes.
	gitWrites bool
	fixture   func(h *H)
	script    string
	refuse    []string
	host      []hostStep
}

// hostStep is a shell script the user runs on the host in a directory.
type hostStep struct{ dir, script string }

func (g gitPlant) run(h *H, p Policy) {
	g.fixture(h)
	o := h.Sandbox(p, plant+g.script)
	h.Refuse(o, g.refuse...)
	outs := []Output{o}
	for _, s := range g.host {
		outs = append(outs, h.AsUser(s.dir, s.script))
	}
	h.NotPwned(outs...)
}

func (g gitPlant) cases() []Case {
	c := Case{Name: g.name, Class: HostTools, Needs: []string{"git"}, Summary: g.summary}
	if !g.gitWrites {
		c.Run = func(h *H) { _, p := h.ws(); g.run(h, p) }
		return []Case{c}
	}
	return withGitWrites(c, g.run)
}

// withGitWrites makes c twice, run by run: as is, and as NAME-git-writes
// with --allow-git-writes.
func withGitWrites(c Case, run func(h *H, p Policy)) []Case {
	w := c
	w.Name, w.Summary = c.Name+"-git-writes", c.Summary+" (with --allow-git-writes)"
	c.Run = func(h *H) { _, p := h.ws(); run(h, p) }
	w.Run = func(h *H) { _, p := h.ws(); p.GitWrites = true; run(h, p) }
	return []Case{c, w}
}

// submoduleUpdate is the user's next step in a clone with a submodule.
var submoduleUpdate = []hostStep{{"ws", `git -c protocol.file.allow=always submodule update --init >/dev/null 2>&1; git status >/dev/null 2>&1; true`}}

// gitPlants are the git cases of the gitPlant shape, in catalogue order.
var gitPlants = []gitPlant{
	{name: "host-git-commondir",
		summary: "write .git/commondir naming a copy of the gitdir whose config has core.fsmonitor and whose hooks/pre-commit plants a command; then the user's git status, commit and worktree add on the host",
		fixture: func(h *H) { h.gitRepo("ws") },
		script:  `G=.git; mkdir $G/c && ok MKDIR; for n in objects refs logs HEAD info; do ln -s ../$n $G/c/$n; done; evilconf > $G/c/config; evilhook $G/c/hooks pre-commit; evilhook $G/c/hooks post-checkout; echo c > $G/commondir && ok COMMONDIR`,
		refuse:  []string{"COMMONDIR"},
		host:    []hostStep{{"ws", hostGit + `; git worktree add -q ../wt2 >/dev/null 2>&1; true`}}},
	{name: "host-git-bare-top", gitWrites: true,
		summary: "in a workspace without .git, plant HEAD, objects, refs and a config with core.worktree and core.fsmonitor at the top, making the workspace a (bare) repository to git; then the user's git status there",
		fixture: func(h *H) { h.Write("ws/src/main.go", "package main\n") },
		script:  `echo 'ref: refs/heads/main' > HEAD && ok HEAD; mkdir -p objects refs/heads && ok DIRS; evilconf . > config && ok CONFIG`,
		refuse:  []string{"HEAD"},
		host:    []hostStep{{"ws", hostGit}, {"ws/src", hostGit}}},
	{name: "host-git-submodule-init", gitWrites: true,
		summary: "in a clone whose submodule was never initialised, build .git/modules/sub (a clone with core.worktree and a post-checkout hook); then the user's git submodule update --init",
		fixture: func(h *H) { h.uninitSubmodule() },
		script:  `M=.git/modules/sub; git clone -q --bare "$FIX/upstream" $M && ok CLONE; git --git-dir=$M config core.bare false; git --git-dir=$M config core.worktree ../../../sub; git --git-dir=$M config core.fsmonitor "$P"; evilhook $M/hooks post-checkout && ok HOOK`,
		refuse:  []string{"CLONE", "HOOK"},
		host:    submoduleUpdate},
	{name: "host-git-submodule-gitfile", gitWrites: true,
		summary: "in a clone whose submodule was never initialised, write sub/.git naming a repository built in the workspace (core.fsmonitor, a post-checkout hook); then the user's git submodule update --init and git status",
		fixture: func(h *H) { h.uninitSubmodule() },
		script:  `git clone -q --bare "$FIX/upstream" evil && git --git-dir=evil config core.bare false && git --git-dir=evil config core.worktree ../sub && git --git-dir=evil config core.fsmonitor "$P" && evilhook evil/hooks post-checkout && ok EVIL; echo "gitdir: ../evil" > sub/.git && ok GITFILE`,
		refuse:  []string{"GITFILE"},
		host:    submoduleUpdate},
	{name: "host-git-hookspath-in-worktree", gitWrites: true,
		summary: "the user's config points core.hooksPath into the work tree (.githooks, as husky does) and includes a config file of the repository; rewrite the hook and the included file; then the user's git commit",
		fixture: func(h *H) {
			h.gitRepo("ws")
			h.WriteMode("ws/.githooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755)
			h.Write("ws/shared.gitconfig", "[user]\n\tname = cordon\n")
			h.Host("ws", "git", "config", "core.hooksPath", ".githooks")
			h.Host("ws", "git", "config", "include.path", "../shared.gitconfig")
		},
		script: `evilhook .githooks pre-commit && ok HOOK; evilconf > shared.gitconfig && ok INCLUDE`,
		refuse: []string{"HOOK", "INCLUDE"},
		host:   []hostStep{{"ws", hostGit}}},
	{name: "host-git-gitlink",
		summary: "git init a new repository in the workspace with core.fsmonitor in its config and add it to the index as a gitlink; then the user's git status at the top",
		fixture: func(h *H) { h.gitRepo("ws") },
		script:  `git init -q lib && git -C lib commit -q --allow-empty -m x && git -C lib config core.fsmonitor "$P" && ok NEWREPO; git add lib 2>/dev/null && ok GITLINK`,
		refuse:  []string{"GITLINK"},
		host:    []hostStep{{"ws", hostGit}}},
	{name: "host-git-rebase-todo",
		summary: "plant an interrupted interactive rebase whose todo list has an exec line; then the user's git status and git rebase --continue",
		fixture: func(h *H) { h.gitRepo("ws") },
		script:  `R=.git/rebase-merge; mkdir $R && ok MKDIR; git rev-parse HEAD > $R/orig-head; git rev-parse HEAD > $R/onto; echo refs/heads/master > $R/head-name; touch $R/interactive; echo "exec $P" > $R/git-rebase-todo && ok TODO`,
		refuse:  []string{"MKDIR", "TODO"},
		host:    []hostStep{{"ws", `git status >/dev/null 2>&1; git rebase --continue >/dev/null 2>&1; true`}}},
}

// uninitSubmodule makes ws a repository with the submodule sub (a clone
// of upstream) that was never initialised, as a clone without
// --recurse-submodules leaves it.
func (h *H) uninitSubmodule() {
	h.gitRepo("upstream")
	h.gitRepo("ws")
	h.Host("ws", "git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", h.Path("upstream"), "sub")
	h.Host("ws", "git", "commit", "-q", "-m", "sub")
	h.Host("ws", "git", "submodule", "deinit", "-q", "-f", "sub")
	h.Host("ws", "rm", "-rf", ".git/modules/sub")
}

func gitCases() []Case {
	git := []string{"git"}
	var cs []Case
	for _, g := range gitPlants {
		cs = append(cs, g.cases()...)
	}
	// The workspace is a directory of a repository, as a monorepo's
	// frontend/ is: git on the host finds the repository above it.
	enclosing := func(h *H, p Policy) {
		h.gitRepo("upstream")
		h.gitRepo("ws")
		h.WriteMode("ws/frontend/githooks/pre-commit", "#!/bin/sh\nexit 0\n", 0o755)
		h.Write("ws/frontend/shared.gitconfig", "[user]\n\tname = cordon\n")
		h.Host("ws", "git", "config", "core.hooksPath", "frontend/githooks")
		h.Host("ws", "git", "config", "include.path", "../frontend/shared.gitconfig")
		h.Host("ws", "git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", h.Path("upstream"), "frontend/lib")
		h.Host("ws", "git", "add", "-A")
		h.Host("ws", "git", "commit", "-q", "-m", "frontend")
		h.Host("ws", "git", "submodule", "deinit", "-q", "-f", "frontend/lib")
		h.Host("ws", "rm", "-rf", ".git/modules/frontend")
		p.Workspace = h.Path("ws/frontend")
		o := h.Sandbox(p, plant+`evilhook githooks pre-commit && ok HOOK; evilconf > shared.gitconfig && ok INCLUDE; git init -q lib && git -C lib config core.fsmonitor "$P" && ok SUBREPO`)
		h.Refuse(o, "HOOK", "INCLUDE", "SUBREPO")
		h.NotPwned(o, h.AsUser("ws", hostGit), h.AsUser("ws/frontend", hostGit),
			h.AsUser("ws", `git -c protocol.file.allow=always submodule update --init >/dev/null 2>&1; git status >/dev/null 2>&1; true`))
	}
	cs = append(cs, withGitWrites(Case{Name: "host-git-enclosing-repository", Class: HostTools, Needs: git,
		Summary: "the workspace is frontend/ of a repository whose config points core.hooksPath and an include into it and whose .gitmodules names frontend/lib, never initialised: rewrite the hook and the included file, make lib a repository with core.fsmonitor; then the user's git commit, status and submodule update above and in the workspace"}, enclosing)...)
	cs = append(cs, Case{Name: "host-git-info-alternates", Class: HostTools, Needs: git,
		Summary: "write .git/info/attributes selecting a diff driver, .git/objects/info/alternates and .git/config.worktree; nothing git reads from the gitdir is writable",
		Run: func(h *H) {
			_, p := h.ws()
			h.gitRepo("ws")
			snap := h.Snapshot()
			o := h.Sandbox(p, plant+`echo '* diff=evil' > .git/info/attributes && ok ATTR; echo "$FIX" > .git/objects/info/alternates && ok ALT; evilconf > .git/config.worktree && ok WTCONF; echo x > .git/description && ok DESC`)
			h.Refuse(o, "ATTR", "ALT", "WTCONF", "DESC")
			h.Unchanged(snap)
		}})
	cs = append(cs, withGitWrites(Case{Name: "cross-launch-derived-carveout", Class: CrossLaunch, Needs: git,
		Summary: "plant pointers at credential stores (a nested .git file naming ~/.ssh, a .git symlink to ~/.kube, .git/commondir naming ~/.kube); the next launch must not read them nor leave stubs in them"},
		func(h *H, p Policy) {
			h.gitRepo("ws")
			h.Write("home/.ssh/config", h.Secret)
			h.Write("home/.kube/config", h.Secret)
			snap := h.Snapshot()
			o := h.Sandbox(p, `mkdir lib && echo "gitdir: $HOME/.ssh" > lib/.git && ok GITFILE; mkdir lib2 && ln -s "$HOME/.kube" lib2/.git && ok LINK; echo "$HOME/.kube" > .git/commondir && ok COMMONDIR`)
			h.NoSecret(o)
			o = h.Sandbox(p, `cat "$HOME/.ssh/config" "$HOME/.kube/config" lib/.git/config lib2/.git/config 2>&1; ls "$HOME/.kube" "$HOME/.ssh" 2>&1; true`)
			h.NoSecret(o)
			h.Unchanged(snap, "ws")
		})...)
	cs = append(cs, Case{Name: "cross-launch-derived-in-denied", Class: CrossLaunch, Needs: git,
		Summary: "with a directory of the workspace denied (--deny ws/secret), plant a nested .git file naming it; the next launch must not read it through a derived read-only root",
		Run: func(h *H) {
			_, p := h.ws()
			h.gitRepo("ws")
			h.Write("ws/secret/repo/config", h.Secret)
			p.Deny = []string{h.Path("ws/secret")}
			h.Mkdir("ws/src")
			o := h.Sandbox(p, `mkdir src/lib && echo "gitdir: ../../secret/repo" > src/lib/.git && ok GITFILE`)
			h.Expect(o, "GITFILE")
			o = h.Sandbox(p, `cat secret/repo/config src/lib/.git/config 2>&1; true`)
			h.NoSecret(o)
		}})
	cs = append(cs, Case{Name: "cross-launch-scan-bound", Class: CrossLaunch, Needs: git,
		OneBackend: "the scan for nested repositories and its record are the launcher's, on the host, before any backend; " +
			"that each backend protects a repository the launcher gives it is cross-launch-closed-dir's",
		Summary: "fill the workspace with 50,004 directories so the scan for nested repositories hits its bound before a vendored repository; the next launch must still protect its hooks and config",
		Run: func(h *H) {
			h.LaunchTimeout = 3 * time.Minute // 50,004 mkdirs, then a scan of them
			_, p := h.ws()
			h.gitRepo("ws")
			h.gitRepo("ws/vendor/x/y/lib")
			h.Mkdir("ws/build")
			h.Sandbox(p, `true`) // the user's earlier launch: the scan sees lib
			// Directories, not files: files cost the scan no directory
			// read (policy's TestScanBoundCountsDirectories). Six
			// directories of 8,334, each under the bound inside one
			// directory (beyond it a directory is read-only whole and
			// not entered, which would not reach the bound), all at a
			// level above lib's.
			// Made from the host: the scan cannot tell who made them, and
			// 50,004 creates through the entry gate of a loaded machine
			// would make the case a race against its launch timeout.
			h.Host("ws/build", "sh", "-c", `for d in 0 1 2 3 4 5; do mkdir $d && (cd $d && seq 1 8334 | xargs mkdir) || exit 1; done`)
			o := h.Sandbox(p, plant+`evilhook vendor/x/y/lib/.git/hooks pre-commit && ok HOOK; git -C vendor/x/y/lib config core.fsmonitor "$P" && ok CONFIG`)
			h.Refuse(o, "HOOK", "CONFIG")
			a := h.AsUser("ws/vendor/x/y/lib", hostGit)
			h.NotPwned(o, a)
		}})
	cs = append(cs, Case{Name: "cross-launch-closed-dir", Class: CrossLaunch, Needs: git,
		Summary: "close the directory above a nested repository (chmod 000) so the next launch cannot look inside it, and another repository appears there meanwhile; that launch opens the directory again and plants both repositories' hooks and config",
		Run: func(h *H) {
			_, p := h.ws()
			h.gitRepo("ws")
			h.gitRepo("ws/vendor/lib")
			h.Sandbox(p, `true`) // the user's earlier launch: the scan records lib
			pl := h.Plan(p)
			o := h.Sandbox(p, `chmod 000 vendor && ok CLOSE`)
			h.MetaChanged(o, pl, "CLOSE", "ws/vendor")
			// The user's, while the directory is closed: made by opening
			// it for a moment, as its owner would (only root could make
			// it inside the closed directory), and closing it again.
			if err := os.Chmod(h.Path("ws/vendor"), 0o700); err != nil {
				h.Fatalf("fixture: %v", err)
			}
			h.gitRepo("ws/vendor/new")
			if err := os.Chmod(h.Path("ws/vendor"), 0); err != nil {
				h.Errorf("fixture: %v", err)
			}
			o = h.closedLaunch(p, "", `chmod 755 vendor && ok OPEN; `+plant+`for r in lib new; do evilhook vendor/$r/.git/hooks pre-commit && ok HOOK_$r; git -C vendor/$r config core.fsmonitor "$P" && ok CONFIG_$r; done; true`)
			h.Refuse(o, "HOOK_lib", "CONFIG_lib", "HOOK_new", "CONFIG_new")
			if err := os.Chmod(h.Path("ws/vendor"), 0o755); err != nil {
				h.Errorf("fixture: %v", err)
			}
			h.NotPwned(o, h.AsUser("ws/vendor/lib", hostGit), h.AsUser("ws/vendor/new", hostGit))
		}})
	cs = append(cs, Case{Name: "cross-launch-closed-top", Class: CrossLaunch, Needs: git,
		Summary: "close the workspace itself (chmod 000) so the next launch cannot look up its .git and protected names; that launch, started from outside, opens it again and plants the repository's hook and config",
		Run: func(h *H) {
			_, p := h.ws()
			h.gitRepo("ws")
			pl := h.Plan(p)
			o := h.Sandbox(p, `chmod 000 . && ok CLOSE`)
			h.MetaChanged(o, pl, "CLOSE", "ws")
			// Started from outside: a user cannot start in a directory
			// closed to them.
			o = h.closedLaunch(p, h.Dir, `chmod 755 "$FIX/ws" && ok OPEN; cd "$FIX/ws" || exit 1; `+plant+`evilhook .git/hooks pre-commit && ok HOOK; git config core.fsmonitor "$P" && ok CONFIG; echo x > .envrc && ok ENVRC`)
			h.Refuse(o, "HOOK", "CONFIG", "ENVRC")
			if err := os.Chmod(h.Path("ws"), 0o755); err != nil {
				h.Errorf("fixture: %v", err)
			}
			h.NotPwned(o, h.AsUser("ws", hostGit))
		}})
	cs = append(cs, Case{Name: "cross-launch-closed-home", Class: CrossLaunch,
		Summary: "with HOME inside the workspace, close ~/.config (chmod 000) so the next launch cannot look up the credential store and git's config below it; that launch opens it again, reads the store and writes git's global config",
		Run: func(h *H) {
			_, p := h.ws()
			h.Home = h.Mkdir("ws/home")
			h.Write("ws/home/.config/gcloud/credentials.db", h.Secret)
			h.Mkdir("ws/home/.config/git")
			pl := h.Plan(p)
			o := h.Sandbox(p, `chmod 000 "$HOME/.config" && ok CLOSE`)
			h.MetaChanged(o, pl, "CLOSE", "ws/home/.config")
			o = h.closedLaunch(p, "", `cd "$HOME"; chmod 755 .config; cat .config/gcloud/credentials.db; printf '[core]\n\tpager = evil\n' > .config/git/config && ok GIT_XDG; echo x > .bashrc && ok BASHRC`)
			h.NoSecret(o)
			h.Refuse(o, "GIT_XDG", "BASHRC")
			for _, f := range []string{"ws/home/.config/git/config", "ws/home/.bashrc"} {
				if h.Exists(f) {
					h.Errorf("host: %s was written", f)
				}
			}
		}})
	cs = append(cs, Case{Name: "dos-hostile-nested-git", Class: DoS, Needs: git,
		Summary: "plant a dangling .git symlink, a .git symlink into a denied store, an unreadable .git file and a symlinked .gitmodules in nested repositories; later launches must still run",
		Run: func(h *H) {
			_, p := h.ws()
			h.gitRepo("ws")
			h.Write("home/.ssh/id", h.Secret)
			h.Mkdir("ws/src")
			o := h.Sandbox(p, `cd src && mkdir a b c && ln -s /nonexistent/gitdir a/.git && ln -s "$HOME/.ssh" b/.git && printf 'gitdir:\n' > c/.git && git init -q d && ln -s /etc/passwd d/.gitmodules && mkdir e && ln -s .git e/.git && ok PLANT`)
			h.Expect(o, "PLANT")
			o = h.Sandbox(p, `ok RAN; cat src/b/.git/id 2>&1; true`)
			h.Expect(o, "RAN")
			h.NoSecret(o)
		}})
	cs = append(cs, Case{Name: "dos-planted-fifo-git", Class: DoS, Needs: []string{"mkfifo"},
		Summary: "make nested repositories by hand with FIFOs as .gitmodules, .git/config, .git/commondir and a .git, where the next launch's git guard reads; it must still run, within the launch timeout, with their metadata read-only",
		Run: func(h *H) {
			_, p := h.ws()
			// No git inside: the directory shape is what the scan
			// takes for a repository.
			h.Mkdir("ws/src")
			o := h.Sandbox(p, `cd src || exit 1
repo() { mkdir -p "$1/.git/objects" "$1/.git/refs" && echo 'ref: refs/heads/main' > "$1/.git/HEAD"; }
repo sub && mkfifo sub/.gitmodules sub/.git/config && ok CONFIG
mkdir pipe && mkfifo pipe/.git && ok DOTGIT
repo common && mkfifo common/.git/commondir && ok COMMONDIR`)
			h.Expect(o, "CONFIG", "DOTGIT", "COMMONDIR")
			// A blocking open of any of them stalls the launch until
			// Launch's timeout fails the case. The writes replace each
			// FIFO first: opening one to write would wait for a reader.
			o = h.Sandbox(p, `cd src || exit 1
ok RAN
{ rm -f sub/.git/config && printf '[core]\n\tfsmonitor = x\n' > sub/.git/config; } 2>/dev/null && ok WCONFIG
mkdir sub/.git/hooks 2>/dev/null && ok WHOOKS
{ echo x > sub/.git/HEAD; } 2>/dev/null && ok WHEAD
{ rm -f sub/.gitmodules && echo > sub/.gitmodules; } 2>/dev/null && ok WGITMODULES
{ rm -f pipe/.git && mkdir pipe/.git; } 2>/dev/null && ok WDOTGIT
{ rm -f common/.git/commondir && echo .. > common/.git/commondir; } 2>/dev/null && ok WCOMMONDIR`)
			h.Expect(o, "RAN")
			h.Refuse(o, "WCONFIG", "WHOOKS", "WHEAD", "WGITMODULES", "WDOTGIT", "WCOMMONDIR")
			h.Want("ws/src/sub/.git/HEAD", "ref: refs/heads/main\n")
			h.Absent("ws/src/sub/.git/hooks")
			for _, rel := range []string{"ws/src/sub/.gitmodules", "ws/src/sub/.git/config", "ws/src/pipe/.git", "ws/src/common/.git/commondir"} {
				if fi, err := os.Lstat(h.Path(rel)); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
					h.Errorf("host: %s is no longer the FIFO the sandbox planted (%v)", h.Path(rel), err)
				}
			}
		}})
	return cs
}
