package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/stretchr/testify/require"
)

// The policy of --agent NAME is its map: every row it keeps is writable,
// every row it runs, obeys or signs in with is not (but the residual
// rows, and the memory of the project the sandbox works in), on every
// backend, since each renders the same model.
func TestAgentHomePolicy(t *testing.T) {
	dir := composeFixture(t)
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o700))
	// A state file is writable where it exists.
	require.NoError(t, os.WriteFile(filepath.Join(home, ".claude/history.jsonl"), nil, 0o600))
	rws, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	for _, name := range AgentCLINames() {
		a, err := LookupAgentCLI(name)
		require.NoError(t, err)
		require.NoError(t, a.PrepareHome(home, ws))
		c, err := Compose(Spec{Workspace: ws, Home: home, UserHome: home, AgentCLI: name})
		require.NoError(t, err, name)
		own := ownEntries(home, rws)
		for _, r := range AgentHomes[name] {
			for p, want := range samples(r, own) {
				require.Equal(t, want, c.Canonical.Access(filepath.Join(home, p), policy.Write), "%s: ~/%s (%s, %s)", name, p, r.Path, r.Class)
			}
		}
		// What the policy makes writable is what the map keeps, or a
		// whole home (~/.codex) whose rows say what in it is kept.
		for _, d := range append(append(a.StateDirs, a.StateFiles...), a.dirs(home, rws)...) {
			if ClassifyHome(name, d) == 0 && hasRowsBelow(name, d) {
				continue
			}
			require.Equal(t, Keeps, ClassifyHome(name, d), "%s: ~/%s", name, d)
		}
		for _, p := range append(a.Protected, a.Credentials...) {
			require.NotEqual(t, Keeps, ClassifyHome(name, p), "%s: ~/%s", name, p)
		}
	}
}

// ownEntries are, per directory of per-project entries, the entry of the
// project in ws: Claude Code's key, Gemini CLI's slug.
func ownEntries(home, ws string) map[string]string {
	slug := GeminiSlug(home, ws)
	return map[string]string{".claude/projects/": claudeProjectKey(ws), ".gemini/tmp/": slug, ".gemini/history/": slug}
}

// samples are paths a row covers, a file below it, each with whether the
// sandbox may write it: "*" made a name; in a directory of per-project
// entries, both another project's entry (never) and this project's
// (always, but its slug's marker).
func samples(r HomePath, own map[string]string) map[string]bool {
	p := strings.ReplaceAll(r.Path, "*", "other")
	for dir, entry := range own {
		if r.Path+"/" == dir || strings.HasPrefix(r.Path, dir+"*") {
			mine := dir + entry + strings.TrimPrefix(strings.TrimPrefix(r.Path, strings.TrimSuffix(dir, "/")), "/*")
			return map[string]bool{p + "/f": false, mine + "/f": !strings.HasSuffix(r.Path, "/.project_root")}
		}
	}
	return map[string]bool{p: r.Class == Keeps || Residual[r.Path]}
}

func TestClassifyHome(t *testing.T) {
	for p, want := range map[string]HomeClass{
		".claude/projects/-a/x.jsonl":                           Keeps,
		".claude/projects/-a/memory/MEMORY.md":                  Obeys,
		".codex/state_5.sqlite-wal":                             Keeps,
		".codex/packages/standalone/releases/0.171.0/bin/codex": Runs,
		".gemini/bin/litert/lit.linux_x86_64":                   Runs,
		".gemini/tmp/proj/memory/MEMORY.md":                     Obeys,
		".gemini/tmp/proj/chats/session.json":                   Keeps,
		".gemini/unknown":                                       0,
	} {
		agent := map[string]string{".claude": "claude-code", ".codex": "codex", ".gemini": "gemini"}[strings.SplitN(p, "/", 2)[0]]
		require.Equal(t, want, ClassifyHome(agent, p), p)
	}
}

func hasRowsBelow(agent, dir string) bool {
	for _, r := range AgentHomes[agent] {
		if strings.HasPrefix(r.Path, dir+"/") {
			return true
		}
	}
	return false
}
