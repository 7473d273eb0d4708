// Package bwrap renders a canonical policy into bubblewrap arguments. It is
// a pure function of the policy and the facts it is handed about the host
// (which paths exist and as what), so it can be tested on any OS; the
// launcher runs what it renders (launcher/bwrap_linux.go), and the native
// backend builds the same Plan's mounts itself (package native).
//
// The recipe (docs/design.md, section 3): one list of mount operations sorted shallow to
// deep, so a deeper root layers over a shallower one exactly as the model's
// "deepest root wins" says; denied directories become read-only mask
// directories that can be traversed but not listed, so carve-outs below
// them stay reachable; denied files become a read-only empty file that
// cannot be opened; writable ancestors of denied and readonly roots are
// bound onto themselves so they cannot be renamed away. A seccomp filter
// (see Seccomp) closes what mounts cannot.
//
// A first design used tmpfs masks; prepared mask directories replace them
// because bwrap made the mount points of carve-outs inside a tmpfs
// listable, and a tmpfs mask needs a remount, 6 arguments per denied
// directory instead of 3 against bwrap's limit of MaxArgs.
package bwrap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// StatFunc reports whether a host path exists and whether it is a directory.
type StatFunc func(path string) (exists, dir bool)

// Options carry what the policy does not say.
type Options struct {
	// Network keeps the host network; false unshares it.
	Network bool
	// Sockets, when set, is the seccomp socket allowlist; nil means the
	// one of Network (SocketsFor). A network mode of its own (a proxy)
	// sets it.
	Sockets *Sockets
	// EmptyFile is a host path of an empty file with mode 0000, bound over
	// denied files. Required when the policy denies a file.
	EmptyFile string
	// MaskRoot is a host directory holding the mask directories of the
	// Plan (MaskRoot/KEY), bound read-only over denied directories.
	// Required when the policy denies a directory.
	MaskRoot string
	// DisableUserns stops the sandbox creating nested user namespaces
	// (bwrap ≥ 0.8). Locked mounts already keep the masks in place in a
	// nested namespace; this closes the door as well.
	DisableUserns bool
	// Chdir is the working directory inside the sandbox; "" keeps bwrap's
	// default (the launcher's cwd when it is visible).
	Chdir string
	// Stat answers questions about the host. Required.
	Stat StatFunc
	// MountsOnly leaves Plan.Args empty: cordon's native backend builds
	// the sandbox from Plan.Mounts and needs no bwrap command line.
	MountsOnly bool
	// FD, when set, gives a descriptor the launcher opened on a writable
	// or readonly root (and checked to be the file the policy was built
	// for): the root is then bound from it (--bind-fd, --ro-bind-fd), and
	// bwrap checks after the mount that the mount point is that file. A
	// root swapped for a symlink or another directory between the
	// launcher's check and bwrap's mount then fails the launch instead of
	// binding what the swap put there.
	FD func(path string) (fd int, ok bool)
}

// Plan is a rendered sandbox.
type Plan struct {
	// Args are bwrap's options, without the binary and the command; the
	// launcher passes them through --args FD so no policy size can exceed
	// ARG_MAX.
	Args []string
	// Seccomp is the filter program the launcher hands bwrap through
	// --seccomp FD (see Seccomp).
	Seccomp []byte
	// Rules are what Seccomp decides, for 'cordon profile'.
	Rules Rules
	// Masks are the mask directories the launcher must provide under
	// Options.MaskRoot before the launch.
	Masks []Mask
	// Mounts are the policy's mount operations in the order Args applies
	// them (after the base bind, /proc and /dev), for a launcher that
	// builds the same tree itself (the native backend).
	Mounts []Mount
}

// MountKind is what a Mount does.
type MountKind int

// Mount kinds, in the order they are applied at equal depth.
const (
	// MountPin binds a writable ancestor of a protected root onto itself,
	// so it cannot be renamed away.
	MountPin MountKind = iota
	// MountBind binds a writable root onto itself.
	MountBind
	// MountReadonly binds a read-only root onto itself, read-only.
	MountReadonly
	// MountMaskDir binds the mask directory Src read-only over a denied
	// directory.
	MountMaskDir
	// MountMaskFile binds the empty file Src read-only over a denied file.
	MountMaskFile
	// MountSubst binds the private directory Src, writable, at /tmp
	// (policy.Canonical.WithTmp).
	MountSubst
)

// A Mount is one operation of the list: Src (Path when empty) bound at
// Path, read-only unless the kind is MountPin or MountBind.
type Mount struct {
	Path string
	Src  string
	Kind MountKind
	// Dir says the target is a directory.
	Dir bool
}

// Readonly reports whether the mount is read-only.
func (m Mount) Readonly() bool {
	return m.Kind != MountPin && m.Kind != MountBind && m.Kind != MountSubst
}

// ProcReadonly are the /proc paths a sandbox gets read-only over its own
// /proc, and ProcMasked those it gets /dev/null over (see Render).
var (
	ProcReadonly = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"}
	ProcMasked   = []string{"/proc/keys", "/proc/key-users"}
)

// MaxArgs is the most arguments bwrap accepts, its command line and the
// --args file together (bubblewrap's MAX_ARGS).
const MaxArgs = 9000

// A Mask is a directory bound read-only over a denied directory: mode 0111
// (traversable, not listable) and empty but for the mount points of the
// roots directly below the denied one, themselves 0111 (directories) or
// 0000 (files). Its content depends only on Entries, so one mask serves
// every denied directory of that shape and can be kept between launches.
type Mask struct {
	Key     string
	Entries []MaskEntry
}

// MaskEntry is a mount point inside a mask, relative to it.
type MaskEntry struct {
	Rel string
	Dir bool
}

// Backend is the value of CORDON_SANDBOX inside the sandbox.
const Backend = "bwrap"

// mount op kinds, in the order they are applied at equal depth.
const (
	opPin      = int(MountPin)
	opBind     = int(MountBind)
	opReadonly = int(MountReadonly)
	opMaskDir  = int(MountMaskDir)
	opMaskFile = int(MountMaskFile)
	opSubst    = int(MountSubst)
)

type op struct {
	path string
	kind int
	dir  bool   // the target is a directory
	mask string // opMaskDir: the mask's key
	src  string // opSubst, and a pin below it: the host directory bound there
}

// Render turns a canonical policy into bwrap arguments.
func Render(c *policy.Canonical, opt Options) (*Plan, error) {
	if opt.Stat == nil {
		return nil, fmt.Errorf("bwrap: render: no Stat function")
	}
	pl := &Plan{}
	a := namespaceArgs(opt)
	// The whole host, read-only or writable as the model says of "/".
	if c.Access("/", policy.Write) {
		a = append(a, "--bind", "/", "/")
	} else {
		a = append(a, "--ro-bind", "/", "/")
	}
	a = append(a, procDevArgs(opt)...)

	ops, err := plan(c, opt, pl)
	if err != nil {
		return nil, err
	}
	pl.Mounts = make([]Mount, 0, len(ops))
	for _, o := range ops {
		pl.Mounts = append(pl.Mounts, o.mount(opt))
		if opt.MountsOnly {
			if err := o.check(opt); err != nil {
				return nil, err
			}
			continue
		}
		if a, err = o.appendArgs(a, opt); err != nil {
			return nil, err
		}
	}
	if opt.MountsOnly {
		a = nil
	}
	if opt.Chdir != "" {
		a = append(a, "--chdir", opt.Chdir)
	}
	pl.Args = a
	pl.Rules = RulesFor(opt.sockets())
	pl.Seccomp = Program(pl.Rules)
	return pl, nil
}

// namespaceArgs are the options that make the sandbox's namespaces and
// drop its privileges.
func namespaceArgs(opt Options) []string {
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
	return append(a, "--die-with-parent", "--new-session", "--cap-drop", "ALL")
}

// procDevArgs mount a fresh /proc (some of it read-only or masked) and a
// minimal /dev (null, zero, full, random, urandom, tty, ptmx, pts, shm),
// then a private /dev/shm.
func procDevArgs(opt Options) []string {
	a := []string{"--proc", "/proc"}
	// What /proc offers of the kernel beyond the sandbox's namespaces.
	// Sysctls are writable by the owner of the file, the host's root, with
	// no capability: a root launcher's sandbox could set
	// kernel.core_pattern or kernel.modprobe and have the host's root run
	// its program. bwrap means to cover these, but skips them when its
	// access(W_OK) check fails, as it did for /proc/sys. Read-only, as
	// container runtimes make them.
	for _, p := range ProcReadonly {
		if ok, _ := opt.Stat(p); ok {
			a = append(a, "--ro-bind", p, p)
		}
	}
	// The kernel's key list is not per namespace: /proc/keys names every
	// key the user's processes may view (Kerberos principals, fscrypt and
	// ecryptfs key ids), whatever the seccomp filter refuses. Masked.
	for _, p := range ProcMasked {
		if ok, _ := opt.Stat(p); ok {
			a = append(a, "--ro-bind", "/dev/null", p)
		}
	}
	return append(a, "--dev", "/dev", "--tmpfs", "/dev/shm")
}

// mount is o as the plan lists it.
func (o op) mount(opt Options) Mount {
	m := Mount{Path: o.path, Src: o.src, Kind: MountKind(o.kind), Dir: o.dir}
	switch o.kind {
	case opMaskDir:
		m.Src = filepath.Join(opt.MaskRoot, o.mask)
	case opMaskFile:
		m.Src = opt.EmptyFile
	}
	return m
}

// appendArgs appends o's bwrap options to a: a root bound from the
// descriptor opt.FD gives, else by path.
// check refuses an op the options cannot render.
func (o op) check(opt Options) error {
	switch {
	case o.kind == opMaskDir && opt.MaskRoot == "":
		return fmt.Errorf("bwrap: render: denied directory %s needs Options.MaskRoot", o.path)
	case o.kind == opMaskFile && opt.EmptyFile == "":
		return fmt.Errorf("bwrap: render: denied file %s needs Options.EmptyFile", o.path)
	}
	return nil
}

func (o op) appendArgs(a []string, opt Options) ([]string, error) {
	if err := o.check(opt); err != nil {
		return nil, err
	}
	p := o.path
	fd, byFD := -1, false
	if opt.FD != nil && (o.kind == opBind || o.kind == opReadonly) {
		fd, byFD = opt.FD(p)
	}
	switch {
	case byFD && o.kind == opBind:
		a = append(a, "--bind-fd", strconv.Itoa(fd), p)
	case byFD:
		a = append(a, "--ro-bind-fd", strconv.Itoa(fd), p)
	case o.src != "":
		a = append(a, "--bind", o.src, p)
	case o.kind == opPin, o.kind == opBind:
		a = append(a, "--bind", p, p)
	case o.kind == opReadonly:
		a = append(a, "--ro-bind", p, p)
	case o.kind == opMaskDir:
		// A prepared read-only directory, not a tmpfs that bwrap fills:
		// bwrap would create the mount points of carve-outs below with
		// listable modes, and a tmpfs needs a remount (3 more arguments
		// per denied directory; bwrap takes at most MaxArgs).
		a = append(a, "--ro-bind", filepath.Join(opt.MaskRoot, o.mask), p)
	case o.kind == opMaskFile:
		a = append(a, "--ro-bind", opt.EmptyFile, p)
	}
	return a, nil
}

func (opt Options) sockets() Sockets {
	if opt.Sockets != nil {
		return *opt.Sockets
	}
	return SocketsFor(opt.Network)
}

// plan builds the mount list from the model.
func plan(c *policy.Canonical, opt Options, pl *Plan) ([]op, error) {
	var ops []op
	pinned := map[string]bool{}
	tmp := c.TmpSource()
	if tmp != "" {
		// The substituted /tmp (policy.Canonical.WithTmp), under every
		// root the policy names below it.
		ops = append(ops, op{path: policy.TmpPath, kind: opSubst, dir: true, src: tmp})
	}
	for _, r := range c.Roots() {
		if r.Path == "/" {
			continue // decided by the base bind
		}
		exists, dir := opt.Stat(r.Path)
		if !exists {
			if r.Kind == policy.Readonly || r.Kind == policy.Denied {
				// The entry gate keeps the name from being made (the
				// launcher's, package gate): nothing of cordon's stands
				// in the project for it.
				continue
			}
			// A writable root the launcher makes on the host before the
			// launch: a file where the policy spells one
			// (policy.Canonical.FileRoot), else a directory.
			dir = !c.FileRoot(r.Path)
		}
		switch r.Kind {
		case policy.Writable, policy.BaseWritable:
			ops = append(ops, op{path: r.Path, kind: opBind, dir: dir})
		case policy.Readonly:
			ops = append(ops, op{path: r.Path, kind: opReadonly, dir: dir})
		case policy.Denied:
			if dir {
				ops = append(ops, op{path: r.Path, kind: opMaskDir, dir: true})
			} else {
				ops = append(ops, op{path: r.Path, kind: opMaskFile})
			}
		}
		if r.Kind == policy.Denied || r.Kind == policy.Readonly {
			// From the parent up, stopping at the first ancestor already
			// decided: its own ancestors were decided with it.
			for anc := parentOf(r.Path); anc != "/" && !pinned[anc]; anc = parentOf(anc) {
				pinned[anc] = true // decided once: the answer does not depend on r
				if !c.Access(anc, policy.Write) {
					continue
				}
				if root, ok := c.DecidingRoot(anc); ok && root.Path == anc {
					continue // a root is already a mount point
				}
				pin := op{path: anc, kind: opPin, dir: true}
				if tmp != "" && policy.UnderTmp(anc) {
					// What is there inside is the private /tmp's.
					pin.src = tmp + strings.TrimPrefix(anc, policy.TmpPath)
				}
				ops = append(ops, pin)
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
	pl.Masks = masks(ops)
	return ops, nil
}

// parentOf is filepath.Dir of a clean absolute path other than "/".
func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}

// below reports whether p lies strictly inside directory d.
func below(p, d string) bool {
	return len(p) > len(d) && p[len(d)] == '/' && p[:len(d)] == d
}

// treeCompare orders paths as strings.Compare would with "/" the lowest
// byte, so that a directory's subtree sorts contiguous after it.
func treeCompare(a, b string) int {
	for i := range min(len(a), len(b)) {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			ca = 0
		}
		if cb == '/' {
			cb = 0
		}
		return int(ca) - int(cb)
	}
	return len(a) - len(b)
}

// masks gives each denied directory the mask that holds the mount points of
// the mounts directly below it (those with no other mount in between), and
// returns the distinct masks. It walks the mounts in tree order, where a
// directory's subtree is contiguous, so the work is the size of each
// denied directory's subtree, not the whole list.
func masks(ops []op) []Mask {
	tree := make([]int, len(ops))
	for i := range tree {
		tree[i] = i
	}
	slices.SortStableFunc(tree, func(a, b int) int { return treeCompare(ops[a].path, ops[b].path) })
	byKey := map[string]Mask{}
	var order []string
	for t, i := range tree {
		if ops[i].kind != opMaskDir {
			continue
		}
		d := ops[i].path
		var entries []MaskEntry
		taken := ""
		for _, j := range tree[t+1:] {
			p := ops[j].path
			if p == d {
				continue // a pin or root at the same path sorts next to it
			}
			if !below(p, d) {
				break
			}
			if taken != "" && (p == taken || below(p, taken)) {
				continue // its mount point lies inside another mount
			}
			taken = p
			entries = append(entries, MaskEntry{Rel: strings.TrimPrefix(p, d+"/"), Dir: ops[j].dir})
		}
		key := maskKey(entries)
		ops[i].mask = key
		if _, ok := byKey[key]; !ok {
			byKey[key] = Mask{Key: key, Entries: entries}
			order = append(order, key)
		}
	}
	out := make([]Mask, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out
}

// maskKey names a mask by its content.
func maskKey(entries []MaskEntry) string {
	if len(entries) == 0 {
		return "empty"
	}
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%s\x00%v\x00", e.Rel, e.Dir)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
