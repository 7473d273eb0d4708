package tty

import (
	"strconv"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// termModes follows the terminal modes a program switches on by writing
// escape sequences (not ioctls: those reach only the sandbox's own pty),
// so that, once it has ended, the user's terminal can be left as it was
// found: a sandbox that exits (or is killed) in the alternate screen, with
// the mouse reported, the cursor hidden or bracketed paste on would
// otherwise leave the user's shell unusable, or typing escape sequences
// into whatever reads next. Its state is fixed-size whatever the sandbox
// writes: a control sequence's parameters of any length are read as
// saturating numbers (terminals accept leading zeros: ESC[?0…01049h is
// 1049), keeping only which tracked modes they name and the first few.
//
// It is deliberately one-sided: a sequence that might switch a mode on
// counts, and nothing the sandbox writes counts as undoing everything (a
// full reset, ESC c, does not leave the alternate screen in tmux). Modes
// it does not follow one by one (insert mode, scroll region, origin mode,
// character sets, SGR attributes) are undone by a soft reset (DECSTR)
// once any escape sequence reached the terminal.
type termModes struct {
	state   byte // 0 ground, 1 after ESC, 2 in a CSI sequence
	touched bool // an escape sequence (or a shift, SO) reached the terminal
	dirty   uint64
	keypad  bool // application keypad (ESC =)
	kitty   int  // kitty keyboard protocol: flags pushed (CSI > n u)
	kset    bool // kitty flags set in place (CSI = flags ; mode u)
	mok     bool // xterm modifyOtherKeys (CSI > 4 ; n m)
	margins bool // a scroll region (CSI t ; b r) or origin mode (CSI ? 6 h)

	// The CSI sequence being read.
	prefix byte   // its private marker ('?', '>', '<', '=') or 0
	inter  byte   // its intermediate byte (DECSTR's '!')
	cur    uint32 // the parameter being read, saturated at maxParam
	np     int    // parameters ended so far, saturated
	first  [2]uint32
	named  uint64 // bits of the privateModes it names
	origin bool   // it names mode 6
}

// maxParam saturates parameters: larger than any mode or count followed.
const maxParam = 1 << 20

// privateModes are the DEC private modes a full-screen or interactive
// program switches, each with the setting a shell prompt expects.
var privateModes = []struct {
	mode uint32
	off  byte // 'l' reset, 'h' set
}{
	{1, 'l'},    // application cursor keys
	{9, 'l'},    // X10 mouse reporting
	{1000, 'l'}, // mouse reporting
	{1001, 'l'},
	{1002, 'l'},
	{1003, 'l'},
	{1005, 'l'}, // mouse encodings
	{1006, 'l'},
	{1015, 'l'},
	{1016, 'l'},
	{1004, 'l'}, // focus events
	{2004, 'l'}, // bracketed paste
	{2026, 'l'}, // synchronized output: the terminal stops drawing
	{69, 'l'},   // left and right margins
	{7, 'h'},    // autowrap
	{25, 'h'},   // visible cursor
	{47, 'l'},   // alternate screen: last, so the rest applies to the main one
	{1047, 'l'},
	{1049, 'l'},
}

// autowrapBit is privateModes' autowrap, set again after a soft reset
// (which may clear it, as the VT510 does).
var autowrapBit = func() uint64 {
	for i, pm := range privateModes {
		if pm.mode == 7 {
			return 1 << i
		}
	}
	panic("autowrap not in privateModes")
}()

func (m *termModes) feed(b []byte) {
	for _, c := range b {
		switch m.state {
		case 0:
			switch c {
			case 0x1b:
				m.state, m.touched = 1, true
			case 0x0e: // SO: the G1 character set
				m.touched = true
			}
		case 1:
			m.state = 0
			switch c {
			case '[':
				m.state, m.prefix, m.inter, m.cur, m.np, m.first, m.named, m.origin = 2, 0, 0, 0, 0, [2]uint32{}, 0, false
			case '=':
				m.keypad = true
			case '>':
				m.keypad = false
			case 0x1b:
				m.state = 1
			}
			// A full reset (ESC c) is not taken as undoing anything:
			// tmux's leaves the alternate screen on.
		case 2:
			m.csiByte(c)
		}
	}
}

// csiByte reads one byte of a CSI sequence.
func (m *termModes) csiByte(c byte) {
	switch {
	case c >= '0' && c <= '9':
		m.cur = min(m.cur*10+uint32(c-'0'), maxParam)
	case c == ';' || c == ':':
		m.endParam()
	case c >= 0x3c && c <= 0x3f: // a private marker
		if m.prefix == 0 && m.np == 0 && m.cur == 0 {
			m.prefix = c
		} else {
			// Where a terminal would take it is unclear: as a
			// separator, so that what follows still counts.
			m.endParam()
		}
	case c >= 0x20 && c <= 0x2f:
		m.inter = c
	case c >= 0x40 && c <= 0x7e:
		m.state = 0
		m.endParam()
		m.csi(c)
	case c == 0x1b:
		m.state = 1
	case c == 0x18 || c == 0x1a: // CAN, SUB cancel the sequence
		m.state = 0
	}
}

// endParam takes the parameter read so far.
func (m *termModes) endParam() {
	if m.np < len(m.first) {
		m.first[m.np] = m.cur
	}
	if m.np < maxParam {
		m.np++
	}
	for i, pm := range privateModes {
		if pm.mode == m.cur {
			m.named |= 1 << i
		}
	}
	m.origin = m.origin || m.cur == 6
	m.cur = 0
}

func (m *termModes) csi(final byte) {
	if m.inter != 0 {
		return
	}
	switch {
	case m.prefix == '?' && (final == 'h' || final == 'l'):
		m.privateMode(final)
	case m.prefix == 0 && final == 'r' && (m.np > 1 || m.first[0] != 0):
		m.margins = true
	case final == 'u':
		m.kittyKeys()
	case m.prefix == '>' && final == 'm' && m.first[0] == 4:
		m.mok = m.np > 1 && m.first[1] != 0
	}
}

// privateMode records a DEC private mode set (h) or reset (l) among the
// modes named in the sequence.
func (m *termModes) privateMode(final byte) {
	m.margins = m.margins || m.origin && final == 'h'
	for i, pm := range privateModes {
		if m.named&(1<<i) == 0 {
			continue
		}
		if final != pm.off {
			m.dirty |= 1 << i
		} else {
			m.dirty &^= 1 << i
		}
	}
}

// kittyKeys records the kitty keyboard protocol's CSI u: > pushes flags,
// < pops N of them, = sets them.
func (m *termModes) kittyKeys() {
	switch m.prefix {
	case '>':
		m.kitty = min(m.kitty+1, 64)
	case '<':
		n := int(min(m.first[0], 64))
		if n < 1 {
			n = 1
		}
		m.kitty = max(m.kitty-n, 0)
	case '=':
		// flags ; mode: 1 sets them all, 2 sets bits, 3 clears bits.
		if mode := m.first[1]; m.first[0] != 0 && mode != 3 {
			m.kset = true
		}
	}
}

// reset is what switches off every mode left on, in the order of
// privateModes, after a soft reset if any escape sequence reached the
// terminal; nil when there is none. What it cannot undo: the window
// title, the palette, the clipboard (OSC 52), anything the terminal
// keeps outside the screen's modes.
func (m *termModes) reset() []byte {
	if testhook.SkipTermModeReset {
		return nil
	}
	var b []byte
	dirty := m.dirty
	if m.touched {
		// DECSTR: insert and origin mode, margins, SGR attributes,
		// character sets, cursor visibility and keys; then insert
		// mode, SGR and G0 explicitly for terminals without it (the
		// margins below, only when set: resetting them moves the
		// cursor).
		b = append(b, "\x1b[!p\x1b[4l\x1b[0m\x0f\x1b(B"...)
		dirty |= autowrapBit
	}
	if m.kitty > 0 {
		b = append(b, "\x1b[<"+strconv.Itoa(m.kitty)+"u"...)
	}
	if m.kset {
		b = append(b, "\x1b[=0;1u"...)
	}
	if m.mok {
		b = append(b, "\x1b[>4m"...)
	}
	if m.keypad {
		b = append(b, "\x1b>"...)
	}
	// Origin mode off and the scroll region reset move the cursor
	// home (not every terminal's DECSTR undoes them: tmux's does not):
	// in the alternate screen, just before leaving it, which puts the
	// main screen's cursor back; otherwise with the cursor then taken to
	// the bottom line, where the shell's prompt is not drawn over the
	// output.
	const marginsOff = "\x1b[?6l\x1b[r"
	margins := m.margins
	for i, pm := range privateModes {
		if dirty&(1<<i) == 0 {
			continue
		}
		if margins && (pm.mode == 47 || pm.mode == 1047 || pm.mode == 1049) {
			b, margins = append(b, marginsOff...), false
		}
		b = append(b, "\x1b[?"+strconv.Itoa(int(pm.mode))+string(pm.off)...)
	}
	if margins {
		b = append(b, marginsOff+"\x1b[9999B"...)
	}
	*m = termModes{}
	return b
}
