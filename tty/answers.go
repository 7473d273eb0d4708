package tty

import (
	"strings"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// answerGuard stands between the sandbox's output and the user's
// terminal for what the terminal answers on its input: the clipboard
// never, and nothing after the end. A terminal answers some sequences
// (device attributes, the cursor position, a colour, the clipboard with
// OSC 52 where tmux's set-clipboard or the terminal allows it) by typing
// the answer into its input, which after the run is the user's shell's.
// So OSC 52 queries (ESC ] 52 ; Pc ; ?) are dropped from the output,
// wherever the writes split them; and once the sandbox has ended, cordon
// asks the terminal for its device attributes (DA1) itself and reads,
// discarding, until that answer has come (settle): terminals answer in
// order, so every answer to what the sandbox asked has come before it.
// Answers the sandbox asked for with DA1 itself are counted, out in the
// output and back in the input relayed to it, so that its own DA1 answers
// are not taken for cordon's.
//
// Its state is fixed-size whatever the sandbox writes.
type answerGuard struct {
	st     byte // one of the g* states
	held   [oscHeld]byte
	nheld  int
	num    uint32 // the OSC's number, or the CSI's first parameter, saturated
	nparam int    // CSI: parameters begun
	plain  bool   // CSI: no private marker nor intermediate so far
	asked  bool   // a sequence a terminal may answer reached it (askingCSI...)
	da1Out int    // DA1 queries that reached the terminal (saturated)
	da1In  int    // DA1 answers relayed to the sandbox (saturated)
	in     answerScan
}

// oscHeld bounds what is held back while an OSC might be a clipboard
// query: ESC ] 52 ; and a Pc of selection letters. A longer Pc drops the
// sequence.
const oscHeld = 64

const (
	gGround  byte = iota
	gEsc          // after ESC (held)
	gCsi          // in a CSI sequence
	gOscNum       // after ESC ], reading its number (held)
	gOscPc        // after ESC ] 52 ;, reading Pc (held)
	gOscPd        // after Pc's ';': '?' makes it a query (held)
	gDrop         // in a dropped query, to its end
	gDropEsc      // ESC inside a dropped query
)

const maxCount = 1 << 20

// out filters b, the sandbox's output, for the terminal: what it returns
// is to be written instead (it may hold bytes held back from an earlier
// call, or fewer than b).
func (g *answerGuard) out(b []byte) []byte {
	o := make([]byte, 0, len(b)+g.nheld)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if g.step(c, &o) {
			i-- // c begins what follows: look at it again
		}
	}
	return o
}

// step takes one byte; true when c is to be looked at again in the state
// step left.
func (g *answerGuard) step(c byte, o *[]byte) bool {
	switch g.st {
	case gGround:
		switch c {
		case 0x1b:
			g.hold(c)
			g.st = gEsc
			return false
		case 0x05: // ENQ: the answerback message
			g.asked = true
		}
		*o = append(*o, c)
	case gEsc:
		switch c {
		case ']':
			g.hold(c)
			g.st, g.num = gOscNum, 0
		case 0x1b: // the first ESC was alone (or tmux's passthrough doubles it)
			*o = append(*o, g.release()...)
			g.hold(c)
		case '[':
			*o = append(append(*o, g.release()...), c)
			g.st, g.num, g.nparam, g.plain = gCsi, 0, 0, true
		default:
			// DECID (ESC Z) is answered; DCS (DECRQSS, XTGETTCAP), APC
			// (kitty's graphics queries) and PM strings may be.
			g.asked = g.asked || strings.IndexByte("ZP_^", c) >= 0
			*o = append(append(*o, g.release()...), c)
			g.st = gGround
		}
	case gCsi:
		*o = g.csiByte(c, *o)
	case gOscNum, gOscPc, gOscPd:
		return g.oscByte(c, o)
	case gDrop:
		switch c {
		case 0x07, 0x18, 0x1a: // BEL ends it, CAN and SUB cancel it
			g.st = gGround
		case 0x1b:
			g.st = gDropEsc
		}
	case gDropEsc:
		if c == '\\' { // ST
			g.st = gGround
			return false
		}
		// The ESC ended the string, as a terminal takes it, and begins
		// a sequence of its own.
		g.hold(0x1b)
		g.st = gEsc
		return true
	}
	return false
}

// csiByte passes one byte of a CSI sequence on and counts DA1 queries
// (CSI c, CSI 0 c) among them.
func (g *answerGuard) csiByte(c byte, o []byte) []byte {
	switch {
	case c >= '0' && c <= '9':
		if g.nparam == 0 {
			g.nparam = 1
		}
		if g.nparam == 1 {
			g.num = min(g.num*10+uint32(c-'0'), maxCount)
		}
	case c == ';' || c == ':':
		g.nparam = max(g.nparam, 1) + 1
	case c >= 0x3c && c <= 0x3f, c >= 0x20 && c <= 0x2f:
		g.plain = false
	case c >= 0x40 && c <= 0x7e:
		if c == 'c' && g.plain && g.num == 0 {
			g.da1Out = min(g.da1Out+1, maxCount)
		}
		// Reports a terminal sends back: device attributes (c), status
		// and cursor position (n), window reports (t), DECREQTPARM (x),
		// and, with a private marker or an intermediate, DECRQM ($p),
		// XTVERSION (>q), the keyboard protocol (?u), XTSMGRAPHICS (?S),
		// XTQMODKEYS (?m). Modes, colours and the screen (h, l, m, J...)
		// are not answered: typing ahead survives a program that only
		// sets them.
		if strings.IndexByte("cntx", c) >= 0 || (!g.plain && strings.IndexByte("pqumS", c) >= 0) {
			g.asked = true
		}
		g.st = gGround
	case c == 0x1b:
		g.hold(c)
		g.st = gEsc
		return o
	case c == 0x18 || c == 0x1a:
		g.st = gGround
	}
	return append(o, c)
}

// oscByte reads an OSC's start, held back until it is known not to be a
// clipboard query.
func (g *answerGuard) oscByte(c byte, o *[]byte) bool {
	pass := func() bool { // not a query: what was held goes out, c is looked at again
		*o = append(*o, g.release()...)
		g.st = gGround
		return true
	}
	switch g.st {
	case gOscNum:
		switch {
		case c >= '0' && c <= '9':
			g.num = min(g.num*10+uint32(c-'0'), maxCount)
			g.hold(c)
		case c == ';' && g.num == 52:
			g.hold(c)
			g.st = gOscPc
		default:
			// Colour queries (OSC 4, 5, 10-19 with '?') are answered;
			// titles, links and the working directory are not.
			if n := g.num; n == 4 || n == 5 || (n >= 10 && n <= 19) {
				g.asked = true
			}
			return pass()
		}
	case gOscPc:
		switch {
		case c == ';':
			g.hold(c)
			g.st = gOscPd
		case c < 0x20 || c == 0x7f:
			return pass() // ended or cancelled before a Pd: no query
		case g.nheld == len(g.held):
			g.nheld, g.st = 0, gDrop // a Pc longer than any terminal's: dropped
		default:
			g.hold(c)
		}
	case gOscPd:
		if c != '?' || testhook.SkipClipboardFilter {
			return pass()
		}
		g.nheld, g.st = 0, gDrop
	}
	return false
}

func (g *answerGuard) hold(c byte) {
	if g.nheld < len(g.held) {
		g.held[g.nheld] = c
		g.nheld++
	}
}

func (g *answerGuard) release() []byte {
	b := g.held[:g.nheld]
	g.nheld = 0
	return b
}

// relayed counts the DA1 answers in b, input relayed to the sandbox.
func (g *answerGuard) relayed(b []byte) {
	g.da1In = min(g.da1In+g.in.feed(b), maxCount)
}

// pending is how many DA1 answers are still to come before cordon's own:
// those to the sandbox's queries that were not relayed to it.
func (g *answerGuard) pending() int { return max(g.da1Out-g.da1In, 0) }

// answerScan finds DA1 answers (CSI ? … c) in a terminal's input, as the
// terminal sends them: not inside a string (OSC, DCS, APC, PM, SOS),
// whose content another answer may echo. Where it errs it errs by
// counting fewer: settle then waits longer, never stops early.
type answerScan struct {
	st      byte // 0 ground, 1 ESC, 2 CSI, 3 string, 4 ESC in a string
	private bool
}

// feed returns how many DA1 answers end in b.
func (s *answerScan) feed(b []byte) int {
	n := 0
	for _, c := range b {
		switch s.st {
		case 0:
			if c == 0x1b {
				s.st = 1
			}
		case 1:
			switch c {
			case '[':
				s.st, s.private = 2, false
			case ']', 'P', '_', '^', 'X':
				s.st = 3
			case 0x1b:
			default:
				s.st = 0
			}
		case 2:
			switch {
			case c == '?':
				s.private = true
			case c == 0x1b:
				s.st = 1
			case c >= 0x40 && c <= 0x7e:
				if c == 'c' && s.private {
					n++
				}
				s.st = 0
			}
		case 3:
			switch c {
			case 0x07, 0x18, 0x1a:
				s.st = 0
			case 0x1b:
				s.st = 4
			}
		case 4:
			// Only ST ends a string here: an answer that echoes an
			// ESC (a title) must not be taken as ending it and
			// holding a DA1 answer, which would end settle early.
			switch c {
			case '\\':
				s.st = 0
			case 0x1b:
			default:
				s.st = 3
			}
		}
	}
	return n
}
