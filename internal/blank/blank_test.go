package blank

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each language's set, character by character, against a table written
// from its definition (Rust: char::is_whitespace; ECMAScript: WhiteSpace
// and LineTerminator; Python: str.isspace), including the characters on
// which they differ.
func TestSets(t *testing.T) {
	type row struct {
		r                rune
		rust, js, python bool
	}
	rows := []row{
		{'\t', true, true, true}, {'\n', true, true, true}, {'\v', true, true, true},
		{'\f', true, true, true}, {'\r', true, true, true}, {' ', true, true, true},
		{0x1C, false, false, true}, {0x1D, false, false, true}, {0x1E, false, false, true}, {0x1F, false, false, true},
		{0x85, true, false, true}, {0xA0, true, true, true}, {0x1680, true, true, true},
		{0x2000, true, true, true}, {0x2005, true, true, true}, {0x200A, true, true, true},
		{0x2028, true, true, true}, {0x2029, true, true, true}, {0x202F, true, true, true},
		{0x205F, true, true, true}, {0x3000, true, true, true}, {0xFEFF, false, true, false},
		{0x180E, false, false, false}, {0x200B, false, false, false}, {0x200D, false, false, false},
		{0x00, false, false, false}, {0x08, false, false, false}, {0x7F, false, false, false},
		{'a', false, false, false}, {'*', false, false, false}, {0x2060, false, false, false},
	}
	for _, c := range rows {
		t.Run(fmt.Sprintf("%U", c.r), func(t *testing.T) {
			require.Equal(t, c.rust, Rust(c.r), "rust")
			require.Equal(t, c.js, JS(c.r), "js")
			require.Equal(t, c.python, Python(c.r), "python")
		})
	}
	// Nothing outside the table: every rune up to U+10FFFF that a set
	// holds is listed above or inside U+2000..U+200A.
	listed := map[rune]bool{}
	for _, c := range rows {
		listed[c.r] = c.rust || c.js || c.python
	}
	for r := rune(0); r <= 0x10FFFF; r++ {
		if (Rust(r) || JS(r) || Python(r)) && !listed[r] && !(r >= 0x2000 && r <= 0x200A) {
			t.Fatalf("%U is in a set but not in the table", r)
		}
	}
}

func TestTrim(t *testing.T) {
	s := "\u00a0\u3000*** Add File: x\u2028\v"
	require.Equal(t, "*** Add File: x", TrimRust(s))
	require.Equal(t, "*** Add File: x", TrimJS(s))
	require.Equal(t, "\u0085x", TrimJS("\u0085x\ufeff"))
	require.Equal(t, "x\ufeff", TrimRust("\u0085x\ufeff"))
	require.Equal(t, "x", TrimPython("\x1fx\x1c"))
	require.Equal(t, "\x1fx", TrimRust("\x1fx"))
}
