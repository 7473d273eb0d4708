package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/stretchr/testify/require"
)

// TestGuardCache: a plain repository's answer comes from the guard's
// record while what it rests on is unchanged, and from a full reading as
// soon as any of it changes: a path named in config, a hook, a
// commondir, a hard link to config or to the index. Whatever the record
// says, the protections are those of a guard without one.
func TestGuardCache(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0 // the fixture is seconds old at most
	m := map[string]string{}
	repo("a/.git/", m)
	repo("b/.git/", m)
	m["b/.git/config"] = "[core]\n\thooksPath = myhooks\n"
	m["b/myhooks/"], m["a/ahooks/"] = "", ""
	root := fixture(t, m)
	cache := t.TempDir()
	home := t.TempDir()
	guarded := func() (*policy.Canonical, []string) {
		t.Helper()
		p, err := Preset(root, Options{Home: home, ScanCache: cache})
		require.NoError(t, err)
		c, err := policy.Canonicalize(p)
		require.NoError(t, err)
		return c, c.Notes()
	}
	record := func() map[string]guardStamp {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(cache, recordName(root)+".guard"))
		require.NoError(t, err)
		rec, ok := decodeGuard(b)
		require.True(t, ok)
		return rec
	}
	a, b := filepath.Join(root, "a/.git"), filepath.Join(root, "b/.git")

	c, _ := guarded()
	require.False(t, c.Access(filepath.Join(root, "b/myhooks"), policy.Write), "named in b's config")
	require.Contains(t, record(), a, "a is plain")
	require.NotContains(t, record(), b, "b's config names a path")
	c, _ = guarded() // from the record
	require.False(t, c.Access(filepath.Join(a, "hooks/pre-commit"), policy.Write))
	require.False(t, c.Access(filepath.Join(root, "b/myhooks"), policy.Write))

	for name, change := range map[string]func(){
		"a path in config": func() {
			require.NoError(t, os.WriteFile(filepath.Join(a, "config"), []byte("[core]\n\thooksPath = ahooks\n"), 0o644))
		},
		"commondir": func() {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "common/hooks"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(a, "commondir"), []byte("../../common\n"), 0o644))
		},
		"a hook": func() {
			require.NoError(t, os.WriteFile(filepath.Join(a, "hooks/pre-commit"), []byte("#!/bin/sh\n"), 0o755))
		},
		"a hard link to config": func() {
			require.NoError(t, os.Link(filepath.Join(a, "config"), filepath.Join(root, "config-link")))
		},
		"a hard link to the index": func() {
			require.NoError(t, os.WriteFile(filepath.Join(a, "index"), nil, 0o644))
			guarded() // recorded with the index, one link
			require.Contains(t, record(), a)
			time.Sleep(20 * time.Millisecond)
			require.NoError(t, os.Link(filepath.Join(a, "index"), filepath.Join(root, "index-link")))
		},
	} {
		t.Run(name, func(t *testing.T) {
			// Start from a plain a, recorded.
			require.NoError(t, os.WriteFile(filepath.Join(a, "config"), []byte("[core]\n"), 0o644))
			for _, p := range []string{filepath.Join(a, "commondir"), filepath.Join(a, "hooks/pre-commit"), filepath.Join(root, "config-link"), filepath.Join(root, "index-link"), filepath.Join(a, "index")} {
				os.Remove(p)
			}
			guarded()
			require.Contains(t, record(), a)

			// Past the filesystem clock's tick: racyWindow, zero here,
			// covers a change within the tick of a reading elsewhere.
			time.Sleep(20 * time.Millisecond)
			change()
			c, notes := guarded()
			require.NotContains(t, record(), a, "read in full, and not plain any more")
			switch name {
			case "a path in config":
				require.False(t, c.Access(filepath.Join(root, "a/ahooks"), policy.Write))
			case "commondir":
				require.False(t, c.Access(filepath.Join(root, "common/hooks"), policy.Write))
			case "a hard link to config", "a hard link to the index":
				require.True(t, strings.Contains(strings.Join(notes, "\n"), "hard links"), "%q", notes)
			}
		})
	}
}

// TestGuardRecordEncoding: a record comes back as stored; a cut one, or
// one of another header, is no record.
func TestGuardRecordEncoding(t *testing.T) {
	c := &guardCache{file: filepath.Join(t.TempDir(), "x.guard"), next: map[string]guardStamp{
		"/w/a/.git":      {Gitdir: stamp{Ino: 1<<64 - 1, Ctime: 5}, Hooks: stamp{Ino: 2, Ctime: 6}, Config: stamp{Ino: 3, Ctime: 7}, ConfigSize: 99},
		"/w/new\nl/.git": {},
	}}
	c.store()
	b, err := os.ReadFile(c.file)
	require.NoError(t, err)
	got, ok := decodeGuard(b)
	require.True(t, ok)
	require.Equal(t, c.next, got)
	_, ok = decodeGuard(b[:len(b)-1])
	require.False(t, ok)
	_, ok = decodeGuard([]byte(strings.Replace(string(b), "cordon-guard 1", "cordon-guard 2", 1)))
	require.False(t, ok)
}
