package conformance

import (
	"os"
	"path/filepath"
	"regexp"
)

// The agent's home (docs/agents.md, "The agent's home, mapped"): under
// --agent NAME the sandbox writes what the agent keeps, and nothing it
// runs or obeys later on the host; judged by the host's files.
func agentHomeCases() []Case {
	return []Case{
		{Name: "agent-home-claude-memory", Class: CrossLaunch, Summary: "under --agent claude-code, write this project's auto-memory and transcript (work), another project's memory and a new project's (refused)",
			Run: func(h *H) {
				ws, _ := h.ws()
				other := h.Write("home/.claude/projects/-other-project/memory/MEMORY.md", "the user's\n")
				rws, err := filepath.EvalSymlinks(ws)
				if err != nil {
					h.Fatalf("fixture: %v", err)
				}
				own := filepath.Join(h.Home, ".claude/projects", regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString(rws, "-"))
				o := h.Sandbox(Policy{Workspace: ws, Agent: "claude-code", Network: true}, `
P=$HOME/.claude/projects
mkdir -p "$OWN/memory" && echo planted-by-sandbox > "$OWN/memory/MEMORY.md" && ok OWN
echo '{}' > "$OWN/s.jsonl" && ok TRANSCRIPT
echo planted > "$P/-other-project/memory/MEMORY.md" && ok OTHER
mkdir -p "$P/-new-project/memory" && echo planted > "$P/-new-project/memory/MEMORY.md" && ok NEW
echo x > "$P/top.jsonl" && ok TOP; true`, "OWN="+own)
				h.Expect(o, "OWN", "TRANSCRIPT")
				h.Refuse(o, "OTHER", "NEW", "TOP")
				h.hostHas(filepath.Join(own, "memory/MEMORY.md"), "planted-by-sandbox\n")
				h.hostHas(other, "the user's\n")
				h.hostAbsent(filepath.Join(h.Home, ".claude/projects/-new-project/memory/MEMORY.md"))
			}},
		{Name: "agent-home-runs", Class: CrossLaunch, Summary: "under --agent codex and --agent gemini, replace Codex's installed executable and plant Gemini's LiteRT helper (refused); their state at the top of their home is written (work)",
			Run: func(h *H) {
				ws, _ := h.ws()
				bin := h.Write("home/.codex/packages/standalone/releases/0.171.0/bin/codex", "the user's codex\n")
				h.Mkdir("home/.gemini")
				o := h.Sandbox(Policy{Workspace: ws, Agent: "codex", Network: true}, `
echo planted > "$BIN" && ok BIN
mkdir -p $HOME/.codex/packages/standalone/releases/9/bin && ok NEWREL
echo db > $HOME/.codex/state_5.sqlite && ok STATE; true`, "BIN="+bin)
				h.Expect(o, "STATE")
				h.Refuse(o, "BIN", "NEWREL")
				h.hostHas(bin, "the user's codex\n")
				h.hostHas(filepath.Join(h.Home, ".codex/state_5.sqlite"), "db\n")
				o = h.Sandbox(Policy{Workspace: ws, Agent: "gemini", Network: true}, `
mkdir -p $HOME/.gemini/bin/litert && echo planted > $HOME/.gemini/bin/litert/lit.linux_x86_64 && ok LIT
mkdir -p $HOME/.gemini/acknowledgments && echo '{}' > $HOME/.gemini/acknowledgments/agents.json && ok ACK
echo id > $HOME/.gemini/installation_id && ok STATE; true`)
				h.Expect(o, "STATE")
				h.Refuse(o, "LIT", "ACK")
				h.hostAbsent(filepath.Join(h.Home, ".gemini/bin/litert/lit.linux_x86_64"))
				h.hostAbsent(filepath.Join(h.Home, ".gemini/acknowledgments/agents.json"))
				h.hostHas(filepath.Join(h.Home, ".gemini/installation_id"), "id\n")
			}},
	}
}

// hostHas fails unless the host's file p holds content.
func (h *H) hostHas(p, content string) {
	b, err := os.ReadFile(p)
	if err != nil || string(b) != content {
		h.Errorf("host: %s holds %q (%v), want %q", p, b, err, content)
	}
}

// hostAbsent fails if the host has a file at p.
func (h *H) hostAbsent(p string) {
	if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
		h.Errorf("host: %s exists, planted by the sandbox", p)
	}
}
