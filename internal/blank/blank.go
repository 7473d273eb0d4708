// Package blank is the white space each agent's language trims, one rule
// per language, so a hook decides a field as the agent will read it once
// trimmed: Rust's str::trim (Codex), JavaScript's String.prototype.trim
// (Claude Code, Gemini CLI, Copilot CLI), Python's str.strip.
//
// The tables are written out from each language's definition rather than
// taken from Go's unicode package, whose IsSpace is Rust's set and no
// other: a hook that trims with Go's rule for a JavaScript agent would
// miss U+FEFF, and one for a Python agent would miss U+001C..U+001F.
package blank

import "strings"

// zs is Unicode's Space_Separator category (Zs), common to all three.
func zs(r rune) bool {
	switch {
	case r == 0x20, r == 0xA0, r == 0x1680, r >= 0x2000 && r <= 0x200A, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// Rust reports whether Rust's char::is_whitespace holds for r (the
// White_Space property), the set str::trim removes.
func Rust(r rune) bool {
	return zs(r) || r >= 0x09 && r <= 0x0D || r == 0x85 || r == 0x2028 || r == 0x2029
}

// JS reports whether JavaScript's String.prototype.trim removes r: the
// spec's WhiteSpace (TAB, VT, FF, ZWNBSP U+FEFF, any Zs) and
// LineTerminator (LF, CR, LS, PS). Not U+0085, which Rust and Python trim.
func JS(r rune) bool {
	return zs(r) || r == 0x09 || r == 0x0B || r == 0x0C || r == 0xFEFF || r == 0x0A || r == 0x0D || r == 0x2028 || r == 0x2029
}

// Python reports whether Python 3's str.isspace holds for r, the set
// str.strip() removes: bidirectional class WS, B or S, or category Zs,
// which adds the information separators U+001C..U+001F to Rust's set.
func Python(r rune) bool {
	return Rust(r) || r >= 0x1C && r <= 0x1F
}

// TrimRust is Rust's str::trim.
func TrimRust(s string) string { return strings.TrimFunc(s, Rust) }

// TrimJS is JavaScript's String.prototype.trim.
func TrimJS(s string) string { return strings.TrimFunc(s, JS) }

// TrimPython is Python's str.strip().
func TrimPython(s string) string { return strings.TrimFunc(s, Python) }
