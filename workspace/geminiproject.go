package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/atomicfile"
	"github.com/cordon-sandbox/cordon/internal/blank"
	"github.com/cordon-sandbox/cordon/internal/boundedread"
	"golang.org/x/sys/unix"
)

// Gemini CLI 0.61.0 keeps each project's chats, logs and memory in
// ~/.gemini/tmp/<slug> and its checkpoints in ~/.gemini/history/<slug>,
// each with a .project_root marker naming the project, and maps project
// paths to slugs in ~/.gemini/projects.json (ProjectRegistry, in
// packages/core/src/config/projectRegistry.ts). A later session in a
// project obeys the memory in its slug's directory, so a sandbox must
// write its own project's directories and no other's, nor remap a slug.
//
// Gemini CLI rewrites projects.json only when the project is missing from
// it or a marker disagrees: when the entry is there and both markers name
// the project, it reads and goes on. So cordon registers the project on
// the host before the launch, as Gemini CLI's getShortId would (the same
// slug, the same markers, the same lock), and the sandbox gets the
// registry, the markers, tmp/ and history/ read-only, and its slug's two
// directories writable (docs/agents.md, "Gemini CLI").

const (
	geminiRegistry = ".gemini/projects.json"
	// geminiMaxRegistry bounds what cordon reads of projects.json: a
	// larger one refuses the launch rather than be dropped.
	geminiMaxRegistry = 4 << 20
	// geminiMaxMarker bounds a .project_root marker: a larger one owns
	// nothing (Gemini CLI would read it all and compare).
	geminiMaxMarker = 64 << 10
	// geminiMaxSlugs bounds the directories scanned and the slugs tried.
	geminiMaxSlugs = 10000
	// geminiLockStale is proper-lockfile's default staleness, which
	// Gemini CLI keeps: a lock older than this is taken over.
	geminiLockStale = 10 * time.Second
	// geminiLockWait is how long Gemini CLI waits for the lock (100
	// tries, 100 ms apart).
	geminiLockWait = 10 * time.Second
)

// geminiBases are the directories Gemini CLI keeps a slug's markers in.
var geminiBases = []string{".gemini/tmp", ".gemini/history"}

// geminiSlugPattern is the registry's schema for a slug: a registry
// holding any other is read as empty, by Gemini CLI and by cordon. So no
// slug is "..", nor holds a "/".
var geminiSlugPattern = regexp.MustCompile(`^[a-z0-9-]+$`)

// geminiSlugify is Gemini CLI's slugify of a project's base name:
// lowercased (JavaScript's toLowerCase, which makes U+0130 two units),
// each run of anything but a-z and 0-9 one "-", none at either end.
func geminiSlugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.ReplaceAll(name, "\u0130", "i\u0307")) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "project"
	}
	return s
}

// geminiLoad reads the registry's projects as Gemini CLI's loadData does:
// a missing, unparsable or off-schema registry is empty.
func geminiLoad(home string) (map[string]string, error) {
	b, err := boundedread.File(filepath.Join(home, geminiRegistry), geminiMaxRegistry, true)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read gemini's project registry: %w", err)
	}
	var data struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(b, &data) != nil || data.Projects == nil {
		return map[string]string{}, nil
	}
	for _, s := range data.Projects {
		if !geminiSlugPattern.MatchString(s) {
			return map[string]string{}, nil
		}
	}
	return data.Projects, nil
}

// geminiOwner is the project a slug's marker in base names, trimmed as
// Gemini CLI trims it (JavaScript's trim); ok is false without a marker.
func geminiOwner(home, base, slug string) (owner string, ok bool, err error) {
	b, err := boundedread.File(filepath.Join(home, base, slug, ".project_root"), geminiMaxMarker, true)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", true, err
	}
	return filepath.Clean(blank.TrimJS(string(b))), true, nil
}

// geminiOwns is Gemini CLI's verifySlugOwnership: no marker of slug names
// another project (a missing one does not count, an unreadable one does).
func geminiOwns(home, slug, ws string) bool {
	for _, base := range geminiBases {
		owner, ok, err := geminiOwner(home, base, slug)
		if err != nil || ok && owner != ws {
			return false
		}
	}
	return true
}

// geminiMarked reports whether both of slug's markers name ws: Gemini CLI
// then writes nothing at its start.
func geminiMarked(home, slug, ws string) bool {
	for _, base := range geminiBases {
		if owner, ok, err := geminiOwner(home, base, slug); err != nil || !ok || owner != ws {
			return false
		}
	}
	return true
}

// GeminiSlug is the slug the registry under home gives the project ws
// (resolved), with both markers naming it; "" when it gives none.
func GeminiSlug(home, ws string) string {
	projects, err := geminiLoad(home)
	if err != nil {
		return ""
	}
	if s := projects[ws]; s != "" && geminiMarked(home, s, ws) {
		return s
	}
	return ""
}

// geminiProjectDirs are the directories a Gemini CLI session in ws writes
// for its project, and the markers in them, read-only.
func geminiProjectDirs(home, ws string) (dirs, readonly []string) {
	s := GeminiSlug(home, ws)
	if s == "" {
		return nil, nil
	}
	for _, base := range geminiBases {
		dirs = append(dirs, base+"/"+s)
		readonly = append(readonly, base+"/"+s+"/.project_root")
	}
	return dirs, readonly
}

// geminiRegister registers the project ws (resolved) in the registry
// under home as Gemini CLI's getShortId does, under the same lock, unless
// it is registered already: after it, Gemini CLI started in ws writes
// neither the registry nor a marker.
func geminiRegister(home, ws string) error {
	if GeminiSlug(home, ws) != "" {
		return nil
	}
	for _, d := range geminiBases {
		if err := mkdirNoLinks(home, filepath.Join(home, d)); err != nil {
			return err
		}
	}
	reg := filepath.Join(home, geminiRegistry)
	if fi, err := os.Lstat(reg); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("gemini's project registry %s: not a regular file", reg)
	} else if err != nil {
		if err := atomicfile.WriteFile(reg, []byte("{\n  \"projects\": {}\n}")); err != nil {
			return fmt.Errorf("make gemini's project registry: %w", err)
		}
	}
	unlock, err := geminiLock(reg)
	if err != nil {
		return err
	}
	defer unlock()
	projects, err := geminiLoad(home)
	if err != nil {
		return err
	}
	slug, save, err := geminiShortID(home, ws, projects)
	if err != nil {
		return err
	}
	if !save {
		return nil
	}
	b, err := json.MarshalIndent(map[string]any{"projects": projects}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(reg, b); err != nil {
		return fmt.Errorf("register %s as %q in gemini's project registry: %w", ws, slug, err)
	}
	return nil
}

// geminiShortID is getShortId's choice under the lock: the registered
// slug when its markers agree, else one whose marker names ws, else a new
// one from the base name; save says the registry changed.
func geminiShortID(home, ws string, projects map[string]string) (slug string, save bool, err error) {
	if s := projects[ws]; s != "" && geminiOwns(home, s, ws) {
		return s, false, geminiMark(home, s, ws)
	}
	delete(projects, ws)
	slug = geminiFind(home, ws)
	if slug == "" {
		if slug, err = geminiClaim(home, ws, projects); err != nil {
			return "", false, err
		}
	}
	projects[ws] = slug
	return slug, true, nil
}

// geminiFind is findExistingSlugForPath: a directory in tmp/, then in
// history/, whose marker names ws. Unlike Gemini CLI it takes only a name
// the registry's schema accepts, which Gemini CLI would store and then
// read the whole registry as empty.
func geminiFind(home, ws string) string {
	for _, base := range geminiBases {
		names, err := readNames(filepath.Join(home, base))
		if err != nil {
			continue
		}
		for _, n := range names {
			if !geminiSlugPattern.MatchString(n) {
				continue
			}
			if owner, ok, err := geminiOwner(home, base, n); err == nil && ok && owner == ws {
				if geminiMark(home, n, ws) != nil {
					break // Gemini CLI's scan of this base ends at the error
				}
				return n
			}
		}
	}
	return ""
}

// readNames are the names in dir, in the directory's order as Node's
// readdir gives them, at most geminiMaxSlugs.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(geminiMaxSlugs)
	if err != nil && len(names) == 0 {
		return nil, err
	}
	return names, nil
}

// geminiClaim is claimNewSlug: the base name's slug, then -1, -2, ...,
// the first no other project has, in the registry or by a marker.
func geminiClaim(home, ws string, projects map[string]string) (string, error) {
	taken := map[string]bool{}
	for _, s := range projects {
		taken[s] = true
	}
	slug := geminiSlugify(filepath.Base(ws))
	for i := 0; i < geminiMaxSlugs; i++ {
		c := slug
		if i > 0 {
			c += "-" + strconv.Itoa(i)
		}
		if taken[c] || !geminiOwns(home, c, ws) {
			continue
		}
		if err := geminiMark(home, c, ws); err == nil {
			return c, nil
		} else if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("register %s in gemini's project registry: %d slugs from %q taken", ws, geminiMaxSlugs, slug)
}

// geminiMark is ensureOwnershipMarkers: slug's directories, each with a
// marker naming ws; a marker naming another project is fs.ErrExist.
func geminiMark(home, slug, ws string) error {
	for _, base := range geminiBases {
		dir := filepath.Join(home, base, slug)
		if err := mkdirNoLinks(home, dir); err != nil {
			return err
		}
		owner, ok, err := geminiOwner(home, base, slug)
		if err != nil {
			return err
		}
		if ok && owner == ws {
			continue
		}
		if ok {
			return fmt.Errorf("gemini's slug %q is %s's: %w", slug, owner, fs.ErrExist)
		}
		fd, err := unix.Open(filepath.Join(dir, ".project_root"), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("mark gemini's slug %q: %w", slug, err)
		}
		_, err = unix.Write(fd, []byte(ws))
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("mark gemini's slug %q: %w", slug, err)
		}
	}
	return nil
}

// geminiLock takes the registry's lock as proper-lockfile does: the
// directory <registry>.lock, taken over when older than geminiLockStale,
// waited for at most geminiLockWait.
func geminiLock(reg string) (unlock func(), err error) {
	lock := reg + ".lock"
	for deadline := time.Now().Add(geminiLockWait); ; {
		err := os.Mkdir(lock, 0o700)
		if err == nil {
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock gemini's project registry: %w", err)
		}
		if fi, err := os.Lstat(lock); err == nil && fi.IsDir() && time.Since(fi.ModTime()) > geminiLockStale {
			os.Remove(lock)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock gemini's project registry: %s held for %s (a Gemini CLI starting?)", lock, geminiLockWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
