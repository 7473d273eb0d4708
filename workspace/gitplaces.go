package workspace

import (
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// The repositories a scan found, guarded in parallel, and the note on
// configuration that appeared in them since the last launch.

// noteFresh tells of agents' and editors' configuration that appeared in
// a nested directory since the previous launch in this root: a sandbox
// can create it where none was (docs/threat-model.md, class 6, limits),
// and tools outside the sandbox obey it. It is read-only from now on, but
// what it says was written before. One note, naming a few.
func (g *gitGuard) noteFresh(places []gitPlace) {
	var fresh []string
	for _, pl := range places {
		for i, n := range NestedNames {
			if pl.Fresh&(1<<i) != 0 {
				fresh = append(fresh, strconv.Quote(filepath.Join(pl.Path, n)))
			}
		}
	}
	if len(fresh) == 0 {
		return
	}
	more := ""
	if len(fresh) > 5 {
		more = fmt.Sprintf(" and %d more", len(fresh)-5)
		fresh = fresh[:5]
	}
	g.note("agents' or editors' configuration appeared since the last launch in %s: %s%s; agents and editors run what it says outside any sandbox (a skill's hooks, MCP servers, tasks): if you did not make it, remove it", g.root, strings.Join(fresh, ", "), more)
}

// guardWorkers is how many goroutines guard the repositories a scan
// found; guardChunk is the fewest repositories worth a goroutine.
var (
	guardWorkers = min(runtime.GOMAXPROCS(0), 8)
	guardChunk   = 64
)

// places guards the repositories the scan found. The work is a few dozen
// system calls per repository, so a workspace of hundreds is guarded by
// several goroutines, each with a guard of its own over a share of them,
// whose roots and notes are then taken in the order of the places (a
// root reached by two guards, through two pointers, is named twice,
// which canonicalization takes as once; a note is kept once).
func (g *gitGuard) places(places []gitPlace) {
	one := func(g *gitGuard, pl gitPlace) {
		if pl.Closed {
			g.roots = append(g.roots, pl.Path)
			g.note("%s is closed to you (no permission to read it): cordon cannot look for git repositories inside, so it is read-only in the sandbox; make it readable (chmod u+rx) to work in it", pl.Path)
			return
		}
		if pl.Wide {
			g.roots = append(g.roots, pl.Path)
			g.note("%s has more than %d subdirectories, more than cordon looks through for git repositories at each launch: it is read-only in the sandbox; remove what you do not need in it (or move it out of the workspace) to work in it", pl.Path, scanWide)
			return
		}
		if pl.Conf != 0 {
			g.confPlace(pl.Path, pl.Conf)
			return
		}
		if pl.Gitdir {
			if b := filepath.Base(pl.Path); !strings.HasSuffix(b, ".git") {
				g.note("%s has the shape of a git directory (HEAD, objects, refs): git run in it or below it on the host uses its config and hooks; if you did not make it, remove it", pl.Path)
			}
			g.gitdir(pl.Path, "")
		} else {
			g.workTreeHas(pl.Path, pl.Has)
		}
	}
	n := min(guardWorkers, len(places)/guardChunk)
	if n < 2 {
		for _, pl := range places {
			one(g, pl)
		}
		return
	}
	parts := make([]*gitGuard, n)
	var wg sync.WaitGroup
	for i := range parts {
		w := &gitGuard{root: g.root, writes: g.writes, done: maps.Clone(g.done), cache: g.cache.fork()}
		parts[i] = w
		lo, hi := i*len(places)/n, (i+1)*len(places)/n
		wg.Go(func() {
			for _, pl := range places[lo:hi] {
				one(w, pl)
			}
		})
	}
	wg.Wait()
	noted := map[string]bool{}
	for _, w := range parts {
		g.cache.join(w.cache)
		g.roots = append(g.roots, w.roots...)
		for _, n := range w.notes {
			if !noted[n] {
				noted[n] = true
				g.notes = append(g.notes, n)
			}
		}
		if g.refuse == nil {
			g.refuse = w.refuse
		}
	}
}
