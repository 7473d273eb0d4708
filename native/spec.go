// Package native is cordon's own Linux sandbox: the same mount tree, seccomp
// filter and namespaces as the bubblewrap backend, built by cordon itself
// with the kernel's mount API, so the cost of a launch grows with the
// number of roots and not with its square, and no argument limit applies
// (docs/design.md, section 3, "native").
//
// The launcher (launcher/native_linux.go) starts this same program as the
// sandbox's pid 1 in new user, mount, pid, ipc, uts, cgroup (and, with the
// network off, network) namespaces, with argv[1] InitArg and the Spec on a
// descriptor. The init builds the tree from the bubblewrap renderer's
// mount list (bwrap.Plan's Mounts and Masks, unchanged) on a root
// of its own, pivots into it, drops every capability, sets no_new_privs,
// restricts itself with Landlock (landlock.go: the second wall), installs
// the seccomp program and runs the command in a new session as its child:
// it reaps, forwards signals, exits with the command's status and dies
// with its parent.
//
// Unlike bubblewrap, which reads /proc/self/mountinfo again for every bind
// to find and remount the mounts below it, each root here is one clone of
// the host's tree at that path, made read-only as a whole (open_tree_attr
// with AT_RECURSIVE, or open_tree and mount_setattr before Linux 6.15) and
// attached (move_mount) in tree order.
package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cordon-sandbox/cordon/internal/rawbytes"
)

// InitArg is argv[1] of the sandbox's init; argv[2] is the descriptor of
// its Spec.
const InitArg = "__cordon-init"

// Backend is the value of CORDON_SANDBOX inside the sandbox.
const Backend = "native"

// InitName is the sandbox's pid 1 as /proc/1/comm shows it inside.
const InitName = "cordon-init"

// Spec is everything the init needs, as the launcher decided it.
type Spec struct {
	// RootWritable binds the host's "/" writable (the model says so of
	// "/"); otherwise it is read-only.
	RootWritable bool `json:"rootWritable,omitempty"`
	// Mounts are the policy's mounts, shallow to deep (bwrap.Plan.Mounts).
	// They travel after the JSON of the rest (Encode): as JSON, 3,000 of
	// them took 7 ms to encode and decode.
	Mounts []Mount `json:"-"`
	// ProcReadonly are bound read-only over themselves in the sandbox's
	// /proc, ProcMasked get /dev/null over them (bwrap.ProcReadonly,
	// bwrap.ProcMasked); those missing are skipped.
	ProcReadonly []string `json:"procReadonly,omitempty"`
	ProcMasked   []string `json:"procMasked,omitempty"`
	// Network keeps the host network; false gives an empty network
	// namespace with a loopback interface.
	Network bool `json:"network,omitempty"`
	// DisableUserns stops the sandbox creating nested user namespaces.
	DisableUserns bool `json:"disableUserns,omitempty"`
	// Seccomp is the filter program (bwrap.Program); empty installs none.
	Seccomp []byte `json:"seccomp,omitempty"`
	// Gate, when not 0, is the descriptor of a Unix socket to the
	// launcher: Seccomp hands the calls that make names to a supervisor
	// (package gate), so it is installed with a listener (gate.Install),
	// which is sent on Gate before the command starts. The command does
	// not inherit it.
	Gate int `json:"gate,omitempty"`
	// Chdir is the working directory inside; "" keeps the launcher's when
	// it is visible, else "/".
	Chdir string `json:"chdir,omitempty"`
	// Path and Argv are the command.
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	// Files is how many descriptors from 3 on the command inherits (the
	// caller's ExtraFiles).
	Files int `json:"files,omitempty"`
	// Closed are the descriptors among 3..3+Files that the caller left
	// nil in ExtraFiles: closed in the command, as os/exec closes them.
	// The init's own runtime may have opened a file there (the Go
	// runtime keeps the cgroup CPU limit file open), which the command
	// must not inherit.
	Closed []int `json:"closed,omitempty"`
	// ProxyPort, when set, is the port of the network allowlist's proxy
	// inside: the init listens on 127.0.0.1:ProxyPort in the sandbox's
	// network namespace and hands the listener to the launcher over the
	// socket on descriptor ProxyFd (3 + Files), which the command does not
	// inherit. Under bwrap a helper exec'd inside does this.
	ProxyPort int `json:"proxyPort,omitempty"`
	ProxyFd   int `json:"proxyFd,omitempty"`
	// StatusFd, when set, is a pipe the init writes the command's status
	// to (one byte: the exit code, or 128+N for signal N) once the
	// command has ended and every other process in the sandbox has been
	// killed and reaped, before the init itself exits: a caller with
	// nothing left to do need not wait for the kernel to take the
	// sandbox's namespaces down (launcher.Cmd.Exec). The command does not
	// inherit it.
	StatusFd int `json:"statusFd,omitempty"`
	// Ctty makes the command's descriptor CttyFd, a terminal (the
	// launcher's pty), the controlling terminal of its session.
	Ctty   bool `json:"ctty,omitempty"`
	CttyFd int  `json:"cttyFd,omitempty"`
	// Weaken names the hardening steps the init leaves out, separated by
	// commas (two walls removed at once show a case can see what both
	// keep); only the conformance suite's mutation check sets it
	// (internal/testhook).
	Weaken string `json:"weaken,omitempty"`
	// Probe builds the whole sandbox, then exits 0 instead of running a
	// command (detection).
	Probe bool `json:"probe,omitempty"`
}

// Mount binds Src (Path when empty) at Path, with the mounts below it,
// read-only when Readonly says so (bwrap.Mount). Ino and Dev, when set,
// are the identity the source must still have: a root swapped between
// the launcher's check and the mount fails the launch instead of binding
// what the swap put there.
type Mount struct {
	Path     string
	Src      string
	Readonly bool
	// What names the mount in errors ("bind", "pin", "mask", ...).
	What string
	Dev  uint64
	Ino  uint64
}

// specWire is Spec as its JSON carries it: the command and the working
// directory as base64 of their bytes ([]byte), since a JSON string holds
// only UTF-8 and encoding/json turns any other byte into U+FFFD: a path
// "./b\xff/run" would run "./b\xef\xbf\xbd/run". These fields, at the
// top, hide the embedded Spec's of the same JSON names.
type specWire struct {
	*specPlain
	Chdir []byte   `json:"chdir,omitempty"`
	Path  []byte   `json:"path"`
	Argv  [][]byte `json:"argv"`
}

// specPlain is Spec without its methods, for specWire to embed.
type specPlain Spec

// Encode is s as the init reads it (Decode): the JSON of every field but
// Mounts (specWire: the command and the working directory as base64), a
// newline (JSON escapes its own), then each mount as six fields ended by
// a NUL byte, which no path holds: Path, Src, What, "r" when Readonly,
// Dev and Ino in decimal.
func (s *Spec) Encode() ([]byte, error) {
	b, err := json.Marshal(specWire{specPlain: (*specPlain)(s), Chdir: []byte(s.Chdir), Path: []byte(s.Path), Argv: rawbytes.Of(s.Argv)})
	if err != nil {
		return nil, err
	}
	// Sized once: grown by appending, 3,000 mounts left 770 KB behind,
	// each new page of it a fault in a fresh process.
	n := len(b) + 1
	for _, m := range s.Mounts {
		n += len(m.Path) + len(m.Src) + len(m.What) + 2*20 + 6
	}
	b = append(make([]byte, 0, n), b...)
	b = append(b, '\n')
	for _, m := range s.Mounts {
		for _, f := range []string{m.Path, m.Src, m.What} {
			if strings.IndexByte(f, 0) >= 0 {
				return nil, fmt.Errorf("mount %q: a NUL byte in a path", m.Path)
			}
			b = append(append(b, f...), 0)
		}
		if m.Readonly {
			b = append(b, 'r')
		}
		b = append(b, 0)
		b = append(strconv.AppendUint(b, m.Dev, 10), 0)
		b = append(strconv.AppendUint(b, m.Ino, 10), 0)
	}
	return b, nil
}

// Decode reads a spec Encode wrote.
func Decode(b []byte) (*Spec, error) {
	return decode(bytes.Clone(b))
}

// decode is Decode of b, whose memory the mounts' fields then share: b
// must not change while the spec is in use (the init maps its spec and
// never unmaps it).
func decode(b []byte) (*Spec, error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, errors.New("no end to the spec's JSON")
	}
	s := &Spec{}
	w := specWire{specPlain: (*specPlain)(s)}
	if err := json.Unmarshal(b[:i], &w); err != nil {
		return nil, err
	}
	s.Chdir, s.Path, s.Argv = string(w.Chdir), string(w.Path), rawbytes.Strings(w.Argv)
	// The fields are slices of b: the init starts with an empty heap, and
	// each new page of it costs a fault.
	var rest string
	if len(b) > i+1 {
		rest = unsafe.String(&b[i+1], len(b)-i-1)
	}
	s.Mounts = make([]Mount, 0, strings.Count(rest, "\x00")/6)
	var f [6]string
	for len(rest) > 0 {
		for k := range f {
			j := strings.IndexByte(rest, 0)
			if j < 0 {
				return nil, fmt.Errorf("mount %d: cut short", len(s.Mounts))
			}
			f[k], rest = rest[:j], rest[j+1:]
		}
		m := Mount{Path: f[0], Src: f[1], What: f[2], Readonly: f[3] == "r"}
		var err1, err2 error
		m.Dev, err1 = strconv.ParseUint(f[4], 10, 64)
		m.Ino, err2 = strconv.ParseUint(f[5], 10, 64)
		if err := errors.Join(err1, err2); err != nil || (f[3] != "" && f[3] != "r") {
			return nil, fmt.Errorf("mount %d (%q): bad fields", len(s.Mounts), f[0])
		}
		s.Mounts = append(s.Mounts, m)
	}
	return s, nil
}

// weakened reports whether the conformance suite's mutation check left
// out step (Spec.Weaken is a comma-separated list of steps).
func (s *Spec) weakened(step string) bool {
	if s.Weaken == "" {
		return false
	}
	for w := range strings.SplitSeq(s.Weaken, ",") {
		if w == step {
			return true
		}
	}
	return false
}
