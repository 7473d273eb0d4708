package landlock

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The spec travels as a flat binary record rather than JSON: the init
// decodes it on every launch before anything else, and encoding/json's
// reflection over the plan's types (built afresh in every new process)
// cost about as much as the rest of the init's setup. Every string is
// its bytes with a length, so a path that is not UTF-8 arrives byte for
// byte.
//
// Layout: the magic, then each field in the order of encodeSpec; a
// number is a uvarint, a string or []byte a uvarint length and the bytes,
// a list a uvarint count and its items, the plan a presence byte.
const specMagic = "cordon-landlock-spec/1\x00"

// maxSpecItems bounds a list's count as the decoder reads it, before it
// allocates: no spec of a launch holds more (the plan's rules are bounded
// far below it).
const maxSpecItems = 1 << 20

type specWriter struct{ b []byte }

func (w *specWriter) num(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *specWriter) str(s string) { w.num(uint64(len(s))); w.b = append(w.b, s...) }
func (w *specWriter) flag(v bool) {
	if v {
		w.num(1)
	} else {
		w.num(0)
	}
}

func (w *specWriter) strs(l []string) {
	w.num(uint64(len(l)))
	for _, s := range l {
		w.str(s)
	}
}

func (w *specWriter) diffs(l []Difference) {
	w.num(uint64(len(l)))
	for _, d := range l {
		w.str(d.Path)
		w.str(d.Why)
		w.flag(d.Below)
	}
}

func encodeSpec(s *Spec) []byte {
	w := &specWriter{b: append(make([]byte, 0, 4096), specMagic...)}
	w.flag(s.Network)
	w.num(uint64(s.ProxyPort))
	w.str(string(s.Seccomp))
	w.num(uint64(s.Gate))
	w.str(s.Path)
	w.strs(s.Argv)
	w.num(uint64(s.Files))
	w.num(uint64(len(s.Closed)))
	for _, fd := range s.Closed {
		w.num(uint64(fd))
	}
	w.str(s.Weaken)
	w.str(s.Probe)
	p := s.Plan
	w.flag(p != nil)
	if p == nil {
		return w.b
	}
	w.num(uint64(p.ABI))
	w.num(p.HandledFS)
	w.num(p.HandledNet)
	w.num(p.Scoped)
	w.num(uint64(len(p.Rules)))
	for _, r := range p.Rules {
		w.str(r.Path)
		w.num(r.Access)
		w.flag(r.Dir)
		w.num(r.Dev)
		w.num(r.Ino)
	}
	w.strs(p.Frozen)
	w.strs(p.Unlistable)
	w.strs(p.Bounded)
	w.diffs(p.Stricter)
	w.diffs(p.Extras)
	return w.b
}

// specReader reads what specWriter wrote; the first error sticks, and
// every later read returns zero values.
type specReader struct {
	b   []byte
	err error
}

var errSpecShort = errors.New("truncated")

func (r *specReader) num() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errSpecShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

// int is a number that must fit an int and be at most limit.
func (r *specReader) int(limit uint64) int {
	v := r.num()
	if v > limit && r.err == nil {
		r.err = fmt.Errorf("value %d over %d", v, limit)
	}
	if r.err != nil {
		return 0
	}
	return int(v)
}

func (r *specReader) flag() bool { return r.int(1) == 1 }

func (r *specReader) bytes() []byte {
	n := r.num()
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = errSpecShort
	}
	if r.err != nil {
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *specReader) str() string { return string(r.bytes()) }

// count is a list's length, bounded by maxSpecItems and by what is left
// (every item takes at least one byte).
func (r *specReader) count() int {
	n := r.int(maxSpecItems)
	if r.err == nil && n > len(r.b) {
		r.err = errSpecShort
	}
	if r.err != nil {
		return 0
	}
	return n
}

func (r *specReader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *specReader) diffs() []Difference {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]Difference, n)
	for i := range out {
		out[i] = Difference{Path: r.str(), Why: r.str(), Below: r.flag()}
	}
	return out
}

const maxInt = uint64(^uint(0) >> 1)

func decodeSpec(b []byte) (*Spec, error) {
	if len(b) < len(specMagic) || string(b[:len(specMagic)]) != specMagic {
		return nil, errors.New("not a landlock spec of this cordon")
	}
	r := &specReader{b: b[len(specMagic):]}
	s := &Spec{Network: r.flag(), ProxyPort: r.int(65535)}
	if sc := r.bytes(); len(sc) > 0 {
		s.Seccomp = append([]byte(nil), sc...)
	}
	s.Gate = r.int(maxInt)
	s.Path = r.str()
	s.Argv = r.strs()
	s.Files = r.int(maxInt)
	if n := r.count(); n > 0 {
		s.Closed = make([]int, n)
		for i := range s.Closed {
			s.Closed[i] = r.int(maxInt)
		}
	}
	s.Weaken, s.Probe = r.str(), r.str()
	if r.flag() {
		p := &Plan{ABI: r.int(maxInt), HandledFS: r.num(), HandledNet: r.num(), Scoped: r.num()}
		if n := r.count(); n > 0 {
			p.Rules = make([]Rule, n)
			for i := range p.Rules {
				p.Rules[i] = Rule{Path: r.str(), Access: r.num(), Dir: r.flag(), Dev: r.num(), Ino: r.num()}
			}
		}
		p.Frozen, p.Unlistable, p.Bounded = r.strs(), r.strs(), r.strs()
		p.Stricter, p.Extras = r.diffs(), r.diffs()
		s.Plan = p
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the end", len(r.b))
	}
	if r.err != nil {
		return nil, fmt.Errorf("decode: %w", r.err)
	}
	return s, nil
}
