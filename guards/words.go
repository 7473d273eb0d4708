package guards

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// literal returns a word's value after quote removal and whether it is fully
// known before run time. Parameter, command and arithmetic expansions make a
// word dynamic; glob reports an unquoted * ? or [ that the shell would
// expand against the filesystem.
func literal(w *syntax.Word) (val string, ok, glob bool) {
	var sb strings.Builder
	ok = true
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") {
				glob = true
			}
			sb.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				sb.WriteString(ansiC(p.Value))
			} else {
				sb.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, isLit := q.(*syntax.Lit); isLit {
					sb.WriteString(unescape(l.Value, true))
				} else {
					ok = false
				}
			}
		default:
			ok = false
		}
	}
	return sb.String(), ok, glob
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
		i++
		switch c := s[i]; c {
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'e', 'E':
			sb.WriteByte(0x1b)
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		case 'x', 'u', 'U':
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 1
			for j < len(s) && j-i-1 < width && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				sb.WriteByte('\\')
				sb.WriteByte(c)
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if c == 'x' {
				sb.WriteByte(byte(v))
			} else {
				sb.WriteRune(rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			sb.WriteByte(byte(v))
			i = j - 1
		case 'c':
			if i+1 < len(s) {
				i++
				sb.WriteByte(s[i] & 0x1f)
			}
		default: // \\ \' \" \? and unknown escapes
			if strings.IndexByte("\\'\"?", c) < 0 {
				sb.WriteByte('\\')
			}
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
