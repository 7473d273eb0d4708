// Package bwrap renders a canonical policy into bubblewrap arguments. It is
// a pure function of the policy and the facts it is handed about the host
// (which paths exist and as what), so it can be tested on any OS; the
// launcher runs what it renders.
//
// The recipe (DESIGN.md §3): one list of mount operations sorted shallow to
// deep, so a deeper root layers over a shallower one exactly as the model's
// "deepest root wins" says; denied directories become read-only tmpfs masks
// that can be traversed but not listed, so carve-outs below them stay
// reachable; denied files become a read-only empty file that cannot be
// opened; writable ancestors of denied and readonly roots are bound onto
// themselves so they cannot be renamed away.
package bwrap

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// StatFunc reports whether a host path exists and whether it is a directory.
type StatFunc func(path string) (exists, dir bool)

// Options carry what the policy does not say.
type Options struct {
	// Network keeps the host network; false unshares it.
	Network bool
	// EmptyFile is a host path of an empty file with mode 0000, bound over
	// denied files. Required when the policy denies a file.
	EmptyFile string
	// DisableUserns stops the sandbox creating nested user namespaces
	// (bwrap ≥ 0.8). Locked mounts already keep the masks in place in a
	// nested namespace; this closes the door as well.
	DisableUserns bool
	// Chdir is the working directory inside the sandbox; "" keeps bwrap's
	// default (the launcher's cwd when it is visible).
	Chdir string
	// Stat answers questions about the host. Required.
	Stat StatFunc
}

// Stub is a mount target that does not exist on the host yet. The launcher
// creates it before the launch and removes it afterwards.
type Stub struct {
	Path string
	Dir  bool
}

// Plan is a rendered sandbox.
type Plan struct {
	// Args are bwrap's options, without the binary and the command; the
	// launcher passes them through --args FD so no policy size can exceed
	// ARG_MAX.
	Args []string
	// Stubs are the mount targets to create first, shallow to deep.
	Stubs []Stub
	// Seccomp is the filter program the launcher hands bwrap through
	// --seccomp FD (see Seccomp).
	Seccomp []byte
}

// Backend is the value of CORDON_SANDBOX inside the sandbox.
const Backend = "bwrap"

// mount op kinds, in the order they are applied at equal depth.
const (
	opPin = iota
	opBind
	opReadonly
	opMaskDir
	opMaskFile
)

type op struct {
	path string
	kind int
}

// Render turns a canonical policy into bwrap arguments.
func Render(c *policy.Canonical, opt Options) (*Plan, error) {
	if opt.Stat == nil {
		return nil, fmt.Errorf("bwrap: render: no Stat function")
	}
	pl := &Plan{}
	a := []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try",
	}
	if opt.DisableUserns {
		a = append(a, "--disable-userns")
	}
	if !opt.Network {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--die-with-parent", "--new-session", "--cap-drop", "ALL")

	// The whole host, read-only or writable as the model says of "/".
	if c.Access("/", policy.Write) {
		a = append(a, "--bind", "/", "/")
	} else {
		a = append(a, "--ro-bind", "/", "/")
	}
	// Fresh /proc and a minimal /dev (null, zero, full, random, urandom,
	// tty, ptmx, pts, shm), then a private /dev/shm.
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm")

	ops, err := plan(c, opt, pl)
	if err != nil {
		return nil, err
	}
	var remount []string
	for _, o := range ops {
		p := o.path
		switch o.kind {
		case opPin, opBind:
			a = append(a, "--bind", p, p)
		case opReadonly:
			a = append(a, "--ro-bind", p, p)
		case opMaskDir:
			// Traversable, not listable, and read-only once every deeper
			// mount is in place (a read-only tmpfs could not take the mount
			// points of carve-outs below it).
			a = append(a, "--perms", "0111", "--tmpfs", p)
			remount = append(remount, p)
		case opMaskFile:
			if opt.EmptyFile == "" {
				return nil, fmt.Errorf("bwrap: render: denied file %s needs Options.EmptyFile", p)
			}
			a = append(a, "--ro-bind", opt.EmptyFile, p)
		}
	}
	for _, p := range remount {
		a = append(a, "--remount-ro", p)
	}
	a = append(a, "--setenv", "CORDON_SANDBOX", Backend)
	if opt.Chdir != "" {
		a = append(a, "--chdir", opt.Chdir)
	}
	pl.Args = a
	pl.Seccomp = Seccomp(!opt.Network)
	return pl, nil
}

// plan builds the mount list from the model and records stubs.
func plan(c *policy.Canonical, opt Options, pl *Plan) ([]op, error) {
	var ops []op
	pinned := map[string]bool{}
	for _, r := range c.Roots() {
		if r.Path == "/" {
			continue // decided by the base bind
		}
		exists, dir := opt.Stat(r.Path)
		if !exists {
			// Always a directory: git ignores empty directories, so a stub
			// never shows up in 'git status' or gets committed by 'git add
			// -A' inside the sandbox, and a directory takes a mask as well
			// as a file would.
			dir = true
			pl.Stubs = append(pl.Stubs, Stub{Path: r.Path, Dir: true})
		}
		switch r.Kind {
		case policy.Writable, policy.BaseWritable:
			ops = append(ops, op{r.Path, opBind})
		case policy.Readonly:
			ops = append(ops, op{r.Path, opReadonly})
		case policy.Denied:
			if dir {
				ops = append(ops, op{r.Path, opMaskDir})
			} else {
				ops = append(ops, op{r.Path, opMaskFile})
			}
		}
		if r.Kind == policy.Denied || r.Kind == policy.Readonly {
			for _, anc := range policy.Ancestors(r.Path) {
				if pinned[anc] || !c.Access(anc, policy.Write) {
					continue
				}
				if root, ok := c.Decider(anc); ok && root.Path == anc {
					continue // a root is already a mount point
				}
				pinned[anc] = true
				ops = append(ops, op{anc, opPin})
			}
		}
	}
	slices.SortStableFunc(ops, func(x, y op) int {
		if dx, dy := policy.Depth(x.path), policy.Depth(y.path); dx != dy {
			return dx - dy
		}
		if c := strings.Compare(x.path, y.path); c != 0 {
			return c
		}
		return x.kind - y.kind
	})
	return ops, nil
}
