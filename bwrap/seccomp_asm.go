package bwrap

import (
	"encoding/binary"
	"fmt"
)

// BPF opcodes (linux/filter.h).
const (
	bpfLdWAbs  = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJa      = 0x05 // BPF_JMP | BPF_JA
	bpfJeqK    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK    = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK   = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRetK    = 0x06 // BPF_RET | BPF_K
	bpfAluAndK = 0x54 // BPF_ALU | BPF_AND | BPF_K
)

// insn is one instruction. t and f name the labels a conditional jump goes
// to when true or false ("" is the offset in jt or jf); t is the target of
// an unconditional jump.
type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
	t, f   string
}

// asm is a tiny assembler: instructions with labels, resolved at the end.
type asm struct {
	p      []insn
	labels map[string]int
}

func (a *asm) emit(i insn) { a.p = append(a.p, i) }

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	if _, dup := a.labels[name]; dup {
		panic("bwrap: seccomp: label " + name + " defined twice")
	}
	a.labels[name] = len(a.p)
}

// assemble resolves the labels (forward only, as BPF requires) and
// encodes the program as struct sock_filter, little endian.
func (a *asm) assemble() []byte {
	off := func(pc int, name string) uint32 {
		to, ok := a.labels[name]
		if !ok || to <= pc {
			panic(fmt.Sprintf("bwrap: seccomp: instruction %d jumps to %q, not a later label", pc, name))
		}
		return uint32(to - pc - 1)
	}
	short := func(pc int, name string) uint8 {
		d := off(pc, name)
		if d > 255 {
			panic(fmt.Sprintf("bwrap: seccomp: instruction %d: jump to %q is %d long", pc, name, d))
		}
		return uint8(d)
	}
	b := make([]byte, 8*len(a.p))
	for pc, in := range a.p {
		switch {
		case in.code == bpfJa && in.t != "":
			in.k = off(pc, in.t)
		default:
			if in.t != "" {
				in.jt = short(pc, in.t)
			}
			if in.f != "" {
				in.jf = short(pc, in.f)
			}
		}
		binary.LittleEndian.PutUint16(b[8*pc:], in.code)
		b[8*pc+2], b[8*pc+3] = in.jt, in.jf
		binary.LittleEndian.PutUint32(b[8*pc+4:], in.k)
	}
	return b
}
