package policy

import (
	"fmt"

	"github.com/cordon-sandbox/cordon/internal/boundedread"
	"github.com/cordon-sandbox/cordon/internal/strictjson"
	"github.com/cordon-sandbox/cordon/netpolicy"
)

// FsSandboxPolicy is the filesystem policy in the five fields of docs/design.md, section 1.
// Paths may be given in any absolute spelling; Canonicalize turns them into
// the realpath form the kernels match against.
type FsSandboxPolicy struct {
	// BaseWritableRoots are broad write grants, such as a harness state dir.
	BaseWritableRoots []string `json:"baseWritableRoots"`
	// DeniedRoots can be neither read, listed nor written.
	DeniedRoots []string `json:"deniedRoots"`
	// ReadonlyRoots are readable and never writable, in every mode.
	ReadonlyRoots []string `json:"readonlyRoots"`
	// WritableRoots are readable and writable.
	WritableRoots []string `json:"writableRoots"`
	// RestrictWrites denies writes everywhere outside base and writable
	// roots; when false, writes are allowed everywhere except under denied
	// and readonly roots.
	RestrictWrites bool `json:"restrictWrites"`

	// derived are read-only roots a preset derived from the content of a
	// writable place (git metadata, files tools run); see Protect.
	derived []string
	// notes explain what a preset saw and chose not to follow.
	notes []string
}

// Protect adds read-only roots derived from content a sandbox may have
// written (gitdirs named by .git files, nested repositories, commondir).
// They only ever restrict: Canonicalize keeps one only where the rest of
// the policy allows writes, so a derived path never re-opens a denied
// root, never makes a path outside a writable root, and never overrides
// a root the caller named (docs/threat-model.md, class 11).
func (p *FsSandboxPolicy) Protect(paths ...string) {
	p.derived = append(p.derived, paths...)
}

// Derived lists the roots added by Protect.
func (p *FsSandboxPolicy) Derived() []string { return p.derived }

// Note records an explanation for Canonical.Notes: something a preset saw
// in a writable place and did not follow.
func (p *FsSandboxPolicy) Note(format string, a ...any) {
	p.notes = append(p.notes, fmt.Sprintf(format, a...))
}

// Kind is the kind of a root: which field named it.
type Kind int

const (
	// None means no root decides a path: the mode (RestrictWrites) does.
	None Kind = iota
	Denied
	Readonly
	Writable
	BaseWritable
)

func (k Kind) String() string {
	switch k {
	case Denied:
		return "denied"
	case Readonly:
		return "readonly"
	case Writable:
		return "writable"
	case BaseWritable:
		return "baseWritable"
	}
	return "none"
}

// Field is the JSON field name that holds roots of this kind.
func (k Kind) Field() string {
	switch k {
	case Denied:
		return "deniedRoots"
	case Readonly:
		return "readonlyRoots"
	case Writable:
		return "writableRoots"
	case BaseWritable:
		return "baseWritableRoots"
	}
	return ""
}

// fields lists the four root fields in a fixed order with their kinds.
func (p *FsSandboxPolicy) fields() []struct {
	kind  Kind
	paths *[]string
} {
	return []struct {
		kind  Kind
		paths *[]string
	}{
		{BaseWritable, &p.BaseWritableRoots},
		{Denied, &p.DeniedRoots},
		{Readonly, &p.ReadonlyRoots},
		{Writable, &p.WritableRoots},
	}
}

// Merge adds o's roots to p; RestrictWrites becomes true if either asks.
func (p *FsSandboxPolicy) Merge(o FsSandboxPolicy) {
	p.BaseWritableRoots = append(p.BaseWritableRoots, o.BaseWritableRoots...)
	p.DeniedRoots = append(p.DeniedRoots, o.DeniedRoots...)
	p.ReadonlyRoots = append(p.ReadonlyRoots, o.ReadonlyRoots...)
	p.WritableRoots = append(p.WritableRoots, o.WritableRoots...)
	p.RestrictWrites = p.RestrictWrites || o.RestrictWrites
	p.derived = append(p.derived, o.derived...)
	p.notes = append(p.notes, o.notes...)
}

// Parse decodes the JSON form: exactly the five keys, each spelled
// exactly and given once, unknown keys rejected (see ParseFile).
// name is used in error messages (usually the file path). A "network"
// object beside them is accepted and ignored here (ParseFile reads it).
func Parse(name string, data []byte) (FsSandboxPolicy, error) {
	f, err := ParseFile(name, data)
	return f.FsSandboxPolicy, err
}

// File is a policy file: the five fields, and optionally a network
// allowlist (docs/design.md, "The network allowlist").
type File struct {
	FsSandboxPolicy
	// Network is {"allowDomains": [...], "denyDomains": [...]}.
	Network *netpolicy.File `json:"network,omitempty"`
	// Env names variables the sandbox gets from the launcher's
	// environment although their names mark a secret (docs/guide.md,
	// "The environment"): a policy file's "env": ["NPM_TOKEN"].
	Env []string `json:"env,omitempty"`
	// AllowUnixSockets are host Unix sockets the sandbox may connect to
	// (--allow-unix-socket; see HostSocket): absolute paths.
	AllowUnixSockets []string `json:"allowUnixSockets,omitempty"`
}

// ParseFile decodes a policy file (docs/design.md, "JSON form"): every
// key in its exact spelling, none twice, none unknown, in the network
// object too. Errors name the file and the key, and what the key must
// hold (`policy p.json: "DeniedRoots" is not a key; did you mean
// "deniedRoots"?`).
func ParseFile(name string, data []byte) (File, error) {
	var f File
	if err := strictjson.Decode(data, &f, strictjson.Options{}); err != nil {
		return File{}, fmt.Errorf("policy %s: %w", name, err)
	}
	return f, nil
}

// MaxPolicyFile bounds a policy file: a policy of 100,000 roots fits.
const MaxPolicyFile = 64 << 20

// Load reads and parses a policy file's five fields.
func Load(path string) (FsSandboxPolicy, error) {
	f, err := LoadFile(path)
	return f.FsSandboxPolicy, err
}

// LoadFile reads and parses a policy file. It must be a regular file of
// at most MaxPolicyFile bytes: one kept in a workspace may have been
// replaced by a sandbox since (Compose keeps it read-only in the launch
// it composes), and a FIFO or a device there must not stall or act.
func LoadFile(path string) (File, error) {
	data, err := boundedread.File(path, MaxPolicyFile, true)
	if err != nil {
		return File{}, fmt.Errorf("read policy: %w", err)
	}
	return ParseFile(path, data)
}
