package workspace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Gemini CLI 0.61.0's slugify (projectRegistry.ts).
func TestGeminiSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"my-app": "my-app", "My App": "my-app", "a__b..c": "a-b-c", "--x--": "x",
		"..": "project", "": "project", "日本": "project", "Café": "caf", "\u0130x": "i-x", "\u212Aelvin": "kelvin",
	} {
		require.Equal(t, want, geminiSlugify(in), in)
	}
}

func readRegistry(t *testing.T, home string) map[string]string {
	var d struct{ Projects map[string]string }
	b, err := os.ReadFile(filepath.Join(home, geminiRegistry))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &d))
	return d.Projects
}

// Registering a project takes the slug Gemini CLI's getShortId would, and
// leaves it so that Gemini CLI writes nothing at its start: the entry,
// and both markers naming the project.
func TestGeminiRegister(t *testing.T) {
	home := t.TempDir()
	marker := func(base, slug, owner string) {
		require.NoError(t, os.MkdirAll(filepath.Join(home, base, slug), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(home, base, slug, ".project_root"), []byte(owner), 0o600))
	}
	// New: the base name's slug.
	require.NoError(t, geminiRegister(home, "/w/app"))
	require.Equal(t, map[string]string{"/w/app": "app"}, readRegistry(t, home))
	require.Equal(t, "app", GeminiSlug(home, "/w/app"))
	// Another project of the same name gets app-1.
	require.NoError(t, geminiRegister(home, "/v/app"))
	require.Equal(t, "app-1", GeminiSlug(home, "/v/app"))
	// A slug whose marker another project holds is skipped.
	marker(".gemini/tmp", "lib", "/elsewhere/lib\n")
	require.NoError(t, geminiRegister(home, "/w/lib"))
	require.Equal(t, "lib-1", GeminiSlug(home, "/w/lib"))
	// A marker naming the project (an older registry lost) is taken,
	// trimmed as JavaScript trims it.
	marker(".gemini/tmp", "old", "\ufeff/w/tool\u2028")
	require.NoError(t, geminiRegister(home, "/w/tool"))
	require.Equal(t, "old", GeminiSlug(home, "/w/tool"))
	// Registered already: nothing is written.
	fi, err := os.Stat(filepath.Join(home, geminiRegistry))
	require.NoError(t, err)
	require.NoError(t, geminiRegister(home, "/w/app"))
	fi2, err := os.Stat(filepath.Join(home, geminiRegistry))
	require.NoError(t, err)
	require.Equal(t, fi.ModTime(), fi2.ModTime())
	// An entry whose marker names another project is not this project's.
	marker(".gemini/history", "app", "/x")
	require.Equal(t, "", GeminiSlug(home, "/w/app"))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gemini/history/app/.project_root"), []byte("/w/app"), 0o600))
	require.Equal(t, "app", GeminiSlug(home, "/w/app"))
}

// A registry Gemini CLI reads as empty (a slug off its schema, "..",
// uppercase, a "/", or no JSON) is empty to cordon too: it names no
// directory of another project's.
func TestGeminiRegistrySchema(t *testing.T) {
	for _, content := range []string{`{"projects":{"/w/a":".."}}`, `{"projects":{"/w/a":"../b"}}`, `{"projects":{"/w/a":"A"}}`, `[]`, `{`, `{"projects":null}`} {
		home := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".gemini/tmp/.."), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(home, geminiRegistry), []byte(content), 0o600))
		p, err := geminiLoad(home)
		require.NoError(t, err)
		require.Empty(t, p, content)
		dirs, ro := geminiProjectDirs(home, "/w/a")
		require.Empty(t, dirs, content)
		require.Empty(t, ro, content)
	}
}

// A lock a Gemini CLI holds is waited for; a stale one is taken over.
func TestGeminiLockStale(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".gemini", "projects.json.lock"), 0o700))
	old := time.Now().Add(-2 * geminiLockStale)
	require.NoError(t, os.Chtimes(filepath.Join(home, ".gemini", "projects.json.lock"), old, old))
	require.NoError(t, geminiRegister(home, "/w/app"))
	require.NoDirExists(t, filepath.Join(home, ".gemini", "projects.json.lock"))
}
