// Package shown escapes text that someone other than the user chose
// (a sandbox, a repository, a hostile client) before cordon prints it on
// the user's terminal or writes it to an audit record: nothing in it can
// move the cursor, set a title, write the clipboard, reorder what is
// shown, or hide itself.
package shown

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String is s with every byte a terminal could act on, and every
// character that shows nothing or reorders what is shown, escaped: C0,
// DEL and C1 controls (a terminal reads 0x9b as CSI), invalid UTF-8,
// format characters (bidi marks and overrides, zero-width ones, soft
// hyphen), line and paragraph separators, spaces other than U+0020,
// invisible fillers, and the backslash that starts an escape. Plain
// spaces stay: a path may hold them.
func String(s string) string { return escape(s, false) }

// Token is String with plain spaces escaped too (as \x20): a name shown
// as Token is one visible token, so it cannot carry words of its own
// into the message around it.
func Token(s string) string { return escape(s, true) }

// Cut is Token of at most max bytes of s, the rest replaced by a note of
// the original length.
func Cut(s string, max int) string { return cut(s, max, true) }

// CutString is String of at most max bytes of s, as Cut.
func CutString(s string, max int) string { return cut(s, max, false) }

func cut(s string, max int, token bool) string {
	more := ""
	if len(s) > max {
		more = "[... " + strconv.Itoa(len(s)) + " bytes in all]"
		s = s[:max]
	}
	return escape(s, token) + more
}

func escape(s string, token bool) string {
	if clean(s, token) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case r == '\\':
			b.WriteString(`\\`)
		case r == ' ' && token:
			b.WriteString(`\x20`)
		case hidden(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s is printable ASCII with nothing to escape: the
// common case, returned as it is.
func clean(s string, token bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '\\' || c == ' ' && token {
			return false
		}
	}
	return true
}

// hidden reports whether r acts on a terminal or shows nothing where it
// stands.
func hidden(r rune) bool {
	if r == ' ' {
		return false
	}
	if !unicode.IsGraphic(r) || unicode.Is(unicode.Zs, r) {
		// Cc, Cf (bidi marks, ZWSP, WJ, SHY...), Co, Cs, Cn, Zl, Zp,
		// and spaces a reader takes for U+0020.
		return true
	}
	switch {
	case r == 0x034f, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5,
		r >= 0x180b && r <= 0x180f, r == 0x3164, r == 0xffa0,
		r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		// Graphic by category, blank on screen: the combining grapheme
		// joiner, Hangul and Khmer fillers, variation selectors.
		return true
	}
	return false
}
