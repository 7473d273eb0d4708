package agentsetup

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tomlFalse reports whether the TOML document src sets the key path want
// (e.g. features.hooks) to false, in any of TOML's spellings: a table
// header ([features], [ "features" ]), a dotted key (features . hooks),
// a quoted key ('hooks'), an inline table (features = { hooks = false }).
// It reads keys and skips values; an error means a part it could not
// read, where the key might hide: then the caller cannot say it is unset.
func tomlFalse(src string, want []string) (bool, error) {
	p := &tomlParser{s: src, want: want}
	if err := p.document(); err != nil {
		return p.found, err
	}
	return p.found, nil
}

type tomlParser struct {
	s     string
	i     int
	want  []string
	found bool
}

func (p *tomlParser) fail(what string) error {
	line := 1 + strings.Count(p.s[:p.i], "\n")
	return errors.New("line " + strconv.Itoa(line) + ": " + what)
}

// space skips blanks; with lines, also newlines and comments.
func (p *tomlParser) space(lines bool) {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t':
			p.i++
		case lines && (c == '\n' || c == '\r'):
			p.i++
		case lines && c == '#':
			p.comment()
		default:
			return
		}
	}
}

func (p *tomlParser) comment() {
	if j := strings.IndexByte(p.s[p.i:], '\n'); j >= 0 {
		p.i += j
	} else {
		p.i = len(p.s)
	}
}

// endOfLine accepts blanks, a comment and a newline (or the end).
func (p *tomlParser) endOfLine() error {
	p.space(false)
	if p.i < len(p.s) && p.s[p.i] == '#' {
		p.comment()
	}
	if p.i < len(p.s) && p.s[p.i] == '\r' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] != '\n' {
		return p.fail("expected the end of the line")
	}
	return nil
}

func (p *tomlParser) document() error {
	var table []string
	for {
		p.space(true)
		if p.i >= len(p.s) {
			return nil
		}
		if p.s[p.i] == '[' {
			p.i++
			double := p.i < len(p.s) && p.s[p.i] == '['
			if double {
				p.i++
			}
			k, err := p.key()
			if err != nil {
				return err
			}
			close := "]"
			if double {
				close = "]]"
			}
			if !strings.HasPrefix(p.s[p.i:], close) {
				return p.fail("expected " + close)
			}
			p.i += len(close)
			table = k
			if err := p.endOfLine(); err != nil {
				return err
			}
			continue
		}
		k, err := p.key()
		if err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != '=' {
			return p.fail("expected =")
		}
		p.i++
		p.space(false)
		if err := p.value(append(append([]string{}, table...), k...)); err != nil {
			return err
		}
		if err := p.endOfLine(); err != nil {
			return err
		}
	}
}

// key reads a dotted key and the blanks after it.
func (p *tomlParser) key() ([]string, error) {
	var parts []string
	for {
		p.space(false)
		if p.i >= len(p.s) {
			return nil, p.fail("expected a key")
		}
		var part string
		switch p.s[p.i] {
		case '"', '\'':
			s, multi, err := p.str()
			if err != nil {
				return nil, err
			}
			if multi {
				return nil, p.fail("a multi-line string as a key")
			}
			part = s
		default:
			j := p.i
			for j < len(p.s) && (isBare(p.s[j])) {
				j++
			}
			if j == p.i {
				return nil, p.fail("expected a key")
			}
			part, p.i = p.s[p.i:j], j
		}
		parts = append(parts, part)
		p.space(false)
		if p.i < len(p.s) && p.s[p.i] == '.' {
			p.i++
			continue
		}
		return parts, nil
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value reads one value at key path k, noting want = false.
func (p *tomlParser) value(k []string) error {
	if p.i >= len(p.s) {
		return p.fail("expected a value")
	}
	switch c := p.s[p.i]; c {
	case '"', '\'':
		_, _, err := p.str()
		return err
	case '{':
		return p.inlineTable(k)
	case '[':
		return p.array(k)
	}
	j := p.i
	for j < len(p.s) && strings.IndexByte(" \t\r\n,]}#", p.s[j]) < 0 {
		j++
	}
	if j == p.i {
		return p.fail("expected a value")
	}
	tok := p.s[p.i:j]
	p.i = j
	if tok == "false" && len(k) == len(p.want) {
		same := true
		for n := range k {
			same = same && k[n] == p.want[n]
		}
		p.found = p.found || same
	}
	return nil
}

// inlineTable reads an inline table at key path k, its opening brace
// next.
func (p *tomlParser) inlineTable(k []string) error {
	p.i++
	p.space(false)
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		sub, err := p.key()
		if err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != '=' {
			return p.fail("expected = in an inline table")
		}
		p.i++
		p.space(false)
		if err := p.value(append(append([]string{}, k...), sub...)); err != nil {
			return err
		}
		p.space(false)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return nil
		}
		return p.fail("expected , or } in an inline table")
	}
}

// array reads an array at key path k, its opening bracket next.
func (p *tomlParser) array(k []string) error {
	p.i++
	for {
		p.space(true)
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return nil
		}
		// an element's keys are not the document's: a path no
		// key can spell
		if err := p.value(append(append([]string{}, k...), "\x00")); err != nil {
			return err
		}
		p.space(true)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return nil
		}
		return p.fail("expected , or ] in an array")
	}
}

// str reads a basic or literal string, single- or multi-line, decoding a
// basic one's escapes (a key may spell hooks as "\u0068ooks").
func (p *tomlParser) str() (string, bool, error) {
	q := p.s[p.i]
	multi := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	if multi {
		p.i += 3
		end := strings.Index(p.s[p.i:], strings.Repeat(string(q), 3))
		if end < 0 {
			return "", true, p.fail("unterminated multi-line string")
		}
		// up to two more quotes belong to the string
		for n := 0; n < 2 && p.i+end+3 < len(p.s) && p.s[p.i+end+3] == q; n++ {
			end++
		}
		p.i += end + 3
		return "", true, nil
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), false, nil
		case c == '\n':
			return "", false, p.fail("newline in a string")
		case c == '\\' && q == '"':
			if p.i+1 >= len(p.s) {
				return "", false, p.fail("unterminated string")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'e':
				b.WriteByte(0x1b)
			case '"', '\\':
				b.WriteByte(e)
			case 'u', 'U', 'x':
				n := map[byte]int{'u': 4, 'U': 8, 'x': 2}[e]
				if p.i+n > len(p.s) {
					return "", false, p.fail("short escape")
				}
				v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				if err != nil {
					return "", false, p.fail("bad escape")
				}
				p.i += n
				b.WriteRune(rune(v))
			default:
				return "", false, p.fail("unknown escape")
			}
		default:
			_, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
	return "", false, p.fail("unterminated string")
}
