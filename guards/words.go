package guards

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// placeholder stands, in a shell string parsed in turn, for each part of it
// known only at run time. It is a parameter expansion there too, so the
// word it lands in stays dynamic: a static command word around it is
// judged, a dynamic one is not.
const placeholder = "${_cordon_runtime_}"

// literal returns a word's value after quote removal and whether it is fully
// known before run time. Parameter, command and arithmetic expansions make a
// word dynamic; glob reports an unquoted * ? or [ that the shell would
// expand against the filesystem.
func literal(w *syntax.Word) (val string, ok, glob bool) {
	val, _, ok, glob = expandWord(w)
	return val, ok, glob
}

// template is a word's value after quote removal with each part known only
// at run time replaced by placeholder: the text of a shell string to parse
// in turn.
func template(w *syntax.Word) string {
	_, tmpl, _, _ := expandWord(w)
	return tmpl
}

func expandWord(w *syntax.Word) (val, tmpl string, ok, glob bool) {
	var sb, tb strings.Builder
	both := func(s string) { sb.WriteString(s); tb.WriteString(s) }
	ok = true
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") {
				glob = true
			}
			both(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				both(ansiC(p.Value))
			} else {
				both(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, isLit := q.(*syntax.Lit); isLit {
					both(unescape(l.Value, true))
				} else {
					ok = false
					tb.WriteString(placeholder)
				}
			}
		default:
			ok = false
			tb.WriteString(placeholder)
		}
	}
	return sb.String(), tb.String(), ok, glob
}

// unescape removes the backslashes the shell removes: any escaped character
// outside quotes; inside double quotes only before $ ` " \ and newline.
func unescape(s string, dquoted bool) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			sb.WriteByte(c)
			continue
		}
		n := s[i+1]
		switch {
		case n == '\n':
			i++
		case !dquoted || strings.IndexByte("$`\"\\", n) >= 0:
			sb.WriteByte(n)
			i++
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// ansiC decodes the escapes of bash's $'...' quoting, so $'\x73udo' is
// recognised as sudo.
func ansiC(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			sb.WriteByte(s[i])
			continue
		}
		i = ansiCEscape(&sb, s, i+1)
	}
	return sb.String()
}

// letterEscapes are the one-letter escapes of $'...' that stand for a control
// character.
var letterEscapes = map[byte]byte{
	'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f',
	'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
}

// ansiCEscape decodes the escape whose first byte after the backslash is
// s[i], writes it to sb and returns the index of the escape's last byte.
func ansiCEscape(sb *strings.Builder, s string, i int) int {
	c := s[i]
	if b, ok := letterEscapes[c]; ok {
		sb.WriteByte(b)
		return i
	}
	switch {
	case c == 'x' || c == 'u' || c == 'U':
		return ansiCHex(sb, s, i)
	case c >= '0' && c <= '7':
		return ansiCOctal(sb, s, i)
	case c == 'c': // \cX: the control character of X
		if i+1 < len(s) {
			sb.WriteByte(s[i+1] & 0x1f)
			return i + 1
		}
		return i
	}
	// \\ \' \" \? stand for the character; bash keeps the backslash of an
	// unknown escape.
	if strings.IndexByte("\\'\"?", c) < 0 {
		sb.WriteByte('\\')
	}
	sb.WriteByte(c)
	return i
}

// ansiCHex decodes \xHH (a byte), \uHHHH and \UHHHHHHHH (a rune), whose
// letter is s[i]; with no hex digit after the letter the escape stays as
// written.
func ansiCHex(sb *strings.Builder, s string, i int) int {
	c := s[i]
	width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	j := i + 1
	for j < len(s) && j-i-1 < width && isHex(s[j]) {
		j++
	}
	if j == i+1 {
		sb.WriteByte('\\')
		sb.WriteByte(c)
		return i
	}
	v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
	if c == 'x' {
		sb.WriteByte(byte(v))
	} else {
		sb.WriteRune(rune(v))
	}
	return j - 1
}

// ansiCOctal decodes \NNN, up to three octal digits starting at s[i], into
// one byte.
func ansiCOctal(sb *strings.Builder, s string, i int) int {
	j := i
	for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
		j++
	}
	v, _ := strconv.ParseUint(s[i:j], 8, 16)
	sb.WriteByte(byte(v))
	return j - 1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
