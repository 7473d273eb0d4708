package launcher

import (
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// termModes follows the terminal modes a program switches on by writing
// escape sequences (not ioctls: those reach only the sandbox's own pty),
// so that, once it has ended, the user's terminal can be left as it was
// found: a sandbox that exits (or is killed) in the alternate screen, with
// the mouse reported, the cursor hidden or bracketed paste on would
// otherwise leave the user's shell unusable, or typing escape sequences
// into whatever reads next. Its state is a fixed set of flags and a short
// buffer for the sequence being read, whatever the sandbox writes.
type termModes struct {
	state  byte // 0 ground, 1 after ESC, 2 in a CSI sequence
	param  [32]byte
	n      int
	over   bool // the parameters did not fit: ignore the sequence
	inter  byte // the CSI sequence's intermediate byte (DECSTR's '!')
	dirty  map[int]bool
	keypad bool // application keypad (ESC =)
	kitty  int  // kitty keyboard protocol: flags pushed (CSI > n u)
	mok    bool // xterm modifyOtherKeys (CSI > 4 ; n m)
}

// privateModes are the DEC private modes a full-screen or interactive
// program switches, each with the setting a shell prompt expects.
var privateModes = []struct {
	mode int
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
	{7, 'h'},    // autowrap
	{25, 'h'},   // visible cursor
	{47, 'l'},   // alternate screen: last, so the rest applies to the main one
	{1047, 'l'},
	{1049, 'l'},
}

func (m *termModes) feed(b []byte) {
	for _, c := range b {
		switch m.state {
		case 0:
			if c == 0x1b {
				m.state = 1
			}
		case 1:
			m.state = 0
			switch c {
			case '[':
				m.state, m.n, m.over, m.inter = 2, 0, false, 0
			case '=':
				m.keypad = true
			case '>':
				m.keypad = false
			case 'c': // full reset
				m.dirty, m.keypad, m.kitty, m.mok = nil, false, 0, false
			case 0x1b:
				m.state = 1
			}
		case 2:
			switch {
			case c >= 0x30 && c <= 0x3f:
				if m.n < len(m.param) {
					m.param[m.n] = c
					m.n++
				} else {
					m.over = true
				}
			case c >= 0x20 && c <= 0x2f:
				m.inter = c
			case c >= 0x40 && c <= 0x7e:
				m.state = 0
				if !m.over {
					m.csi(string(m.param[:m.n]), c)
				}
			case c == 0x1b:
				m.state = 1
			case c == 0x18 || c == 0x1a: // CAN, SUB cancel the sequence
				m.state = 0
			}
		}
	}
}

func (m *termModes) csi(p string, final byte) {
	if m.inter != 0 {
		return
	}
	switch {
	case strings.HasPrefix(p, "?") && (final == 'h' || final == 'l'):
		for _, f := range strings.Split(p[1:], ";") {
			n, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			for _, pm := range privateModes {
				if pm.mode == n {
					if m.dirty == nil {
						m.dirty = map[int]bool{}
					}
					m.dirty[n] = final != pm.off
				}
			}
		}
	case strings.HasPrefix(p, ">") && final == 'u':
		m.kitty = min(m.kitty+1, 64)
	case strings.HasPrefix(p, "<") && final == 'u':
		n, err := strconv.Atoi(p[1:])
		if err != nil || n < 1 {
			n = 1
		}
		m.kitty = max(m.kitty-n, 0)
	case strings.HasPrefix(p, ">4") && final == 'm':
		f := strings.Split(p[1:], ";")
		m.mok = len(f) > 1 && f[1] != "" && f[1] != "0"
	}
}

// reset is what switches off every mode left on, in the order of
// privateModes; nil when there is none.
func (m *termModes) reset() []byte {
	if testhook.SkipTermModeReset {
		return nil
	}
	var b []byte
	if m.kitty > 0 {
		b = append(b, "\x1b[<"+strconv.Itoa(m.kitty)+"u"...)
	}
	if m.mok {
		b = append(b, "\x1b[>4m"...)
	}
	if m.keypad {
		b = append(b, "\x1b>"...)
	}
	for _, pm := range privateModes {
		if m.dirty[pm.mode] {
			b = append(b, "\x1b[?"+strconv.Itoa(pm.mode)+string(pm.off)...)
		}
	}
	*m = termModes{}
	return b
}
