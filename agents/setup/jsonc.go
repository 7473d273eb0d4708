package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// node is one JSON value of a settings file with its byte span, so that
// an edit can splice text and leave every other byte as it was.
type node struct {
	kind       byte // '{', '[', '"', '0' (number), 'l' (true, false, null)
	start, end int  // the value's span, [start, end)
	members    []member
	elems      []*node
	str        string // a string's decoded value
}

// member is one key of an object.
type member struct {
	key      string
	keyStart int // where the key's opening quote is
	val      *node
}

// get is the value of key in an object, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for _, m := range n.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// text is n's string value, "" when n is not a string.
func (n *node) text() string {
	if n == nil || n.kind != '"' {
		return ""
	}
	return n.str
}

// parser reads JSON with comments (// and /* */) and trailing commas,
// what Claude Code and Gemini CLI accept in their settings. A key given
// twice is an error: which of the two an agent obeys is its business, and
// an edit of one would leave the other in force.
type parser struct {
	src []byte
	pos int
}

// parseJSONC parses a whole document; its top level must be an object.
func parseJSONC(src []byte) (*node, error) {
	if !utf8.Valid(src) {
		return nil, errors.New("not UTF-8")
	}
	p := &parser{src: src}
	if len(src) >= 3 && string(src[:3]) == "\ufeff" {
		p.pos = 3
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.errorf("unexpected %q after the top-level value", p.src[p.pos])
	}
	if n.kind != '{' {
		return nil, errors.New("the top level is not an object")
	}
	return n, nil
}

func (p *parser) errorf(format string, a ...any) error {
	line := 1 + strings.Count(string(p.src[:min(p.pos, len(p.src))]), "\n")
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, a...))
}

// skip passes white space and comments.
func (p *parser) skip() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			end := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if end < 0 {
				return p.errorf("unterminated /* comment")
			}
			p.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

// maxDepth bounds nesting: a settings file is shallow, and a hostile one
// must not exhaust the stack.
const maxDepth = 200

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested deeper than %d", maxDepth)
	}
	if p.pos >= len(p.src) {
		return nil, p.errorf("unexpected end of file")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &node{kind: '"', start: start, end: p.pos, str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		for p.pos < len(p.src) && strings.IndexByte("+-0123456789.eE", p.src[p.pos]) >= 0 {
			p.pos++
		}
		if !json.Valid(p.src[start:p.pos]) {
			return nil, p.errorf("bad number %q", p.src[start:p.pos])
		}
		return &node{kind: '0', start: start, end: p.pos}, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.src[p.pos:min(len(p.src), p.pos+5)]), lit) {
				p.pos += len(lit)
				return &node{kind: 'l', start: start, end: p.pos}, nil
			}
		}
		return nil, p.errorf("unexpected %q", c)
	}
}

func (p *parser) string() (string, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '\\':
			p.pos += 2
		case c == '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.src[start:p.pos], &s); err != nil {
				p.pos = start
				return "", p.errorf("bad string: %v", err)
			}
			return s, nil
		case c < 0x20:
			return "", p.errorf("control character in a string")
		default:
			p.pos++
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *parser) object(depth int) (*node, error) {
	n := &node{kind: '{', start: p.pos}
	p.pos++
	seen := map[string]bool{}
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, p.errorf("expected a key or '}'")
		}
		keyStart := p.pos
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			p.pos = keyStart
			return nil, p.errorf("key %q given twice", key)
		}
		seen[key] = true
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.errorf("expected ':' after key %q", key)
		}
		p.pos++
		if err := p.skip(); err != nil {
			return nil, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, member{key: key, keyStart: keyStart, val: v})
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			continue
		}
		return nil, p.errorf("expected ',' or '}'")
	}
}

func (p *parser) array(depth int) (*node, error) {
	n := &node{kind: '[', start: p.pos}
	p.pos++
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			continue
		}
		return nil, p.errorf("expected ',' or ']'")
	}
}
