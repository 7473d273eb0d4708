package seatbelt

// An evaluator of the SBPL subset cordon emits, so tests on any OS can ask
// "would Seatbelt allow op on path?" and compare the answer with the model.
// It follows SBPL's semantics: the last rule whose operation and filters
// match decides, else the default; several filters in one rule match if any
// does; subpath is the path or anything below it, component-wise; prefix is
// a plain string prefix; regex is an unanchored regular expression.
//
// It is deliberately strict: an unknown operation or filter is a parse
// error (sandbox-exec would refuse the profile too), and a filter it cannot
// evaluate for a query is an error rather than a guess. It refuses what
// some supported release refuses: a symbolic ioctl command (unbound on
// macOS 13 and 14) and a rule whose path data passes the 65,535 bytes a
// compiled pattern may hold.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// maxPatternBytes is Seatbelt's limit on one rule's compiled pattern. The
// evaluator counts the path strings alone, less than what the compiler
// builds from them, so a profile it refuses would certainly be refused.
const maxPatternBytes = 65535

type sxKind int

const (
	sxList sxKind = iota
	sxSym
	sxStr
	sxRegex
)

type sx struct {
	kind sxKind
	atom string
	list []sx
	line int
}

func (n sx) head() string {
	if n.kind != sxList || len(n.list) == 0 || n.list[0].kind != sxSym {
		return ""
	}
	return n.list[0].atom
}

func (n sx) String() string {
	switch n.kind {
	case sxSym:
		return n.atom
	case sxStr:
		return fmt.Sprintf("%q", n.atom)
	case sxRegex:
		return `#"` + n.atom + `"`
	}
	parts := make([]string, len(n.list))
	for i, c := range n.list {
		parts[i] = c.String()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// parseSx reads every top-level expression of src.
func parseSx(src string) ([]sx, error) {
	p := &sxParser{src: src, line: 1}
	var out []sx
	for {
		p.skip()
		if p.pos >= len(p.src) {
			return out, nil
		}
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
}

type sxParser struct {
	src  string
	pos  int
	line int
}

func (p *sxParser) skip() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r':
			p.pos++
		case c == ';':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *sxParser) expr() (sx, error) {
	line := p.line
	switch c := p.src[p.pos]; {
	case c == '(':
		p.pos++
		n := sx{kind: sxList, line: line}
		for {
			p.skip()
			if p.pos >= len(p.src) {
				return sx{}, fmt.Errorf("line %d: unclosed list", line)
			}
			if p.src[p.pos] == ')' {
				p.pos++
				return n, nil
			}
			e, err := p.expr()
			if err != nil {
				return sx{}, err
			}
			n.list = append(n.list, e)
		}
	case c == ')':
		return sx{}, fmt.Errorf("line %d: unexpected )", line)
	case c == '"':
		p.pos++
		s, err := p.str(true)
		return sx{kind: sxStr, atom: s, line: line}, err
	case strings.HasPrefix(p.src[p.pos:], `#"`):
		p.pos += 2
		s, err := p.str(false)
		return sx{kind: sxRegex, atom: s, line: line}, err
	default:
		start := p.pos
		for p.pos < len(p.src) && !strings.ContainsRune(" \t\r\n();\"", rune(p.src[p.pos])) {
			p.pos++
		}
		return sx{kind: sxSym, atom: p.src[start:p.pos], line: line}, nil
	}
}

// str reads up to the closing quote. In a string, \" \\ \n \t are escapes;
// in a regex literal backslashes are kept for the regex engine and only \"
// is unescaped.
func (p *sxParser) str(escapes bool) (string, error) {
	var b strings.Builder
	line := p.line
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch {
		case c == '"':
			return b.String(), nil
		case c == '\\' && p.pos < len(p.src):
			d := p.src[p.pos]
			p.pos++
			switch {
			case d == '"':
				b.WriteByte('"')
			case !escapes:
				b.WriteByte('\\')
				b.WriteByte(d)
			case d == '\\':
				b.WriteByte('\\')
			case d == 'n':
				b.WriteByte('\n')
			case d == 't':
				b.WriteByte('\t')
			default:
				return "", fmt.Errorf("line %d: unknown escape \\%c", p.line, d)
			}
		default:
			if c == '\n' {
				p.line++
			}
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("line %d: unterminated string", line)
}

// knownOps are the operations the evaluator accepts in a profile.
var knownOps = map[string]bool{
	"default": true, "file*": true,
	"file-read*": true, "file-read-data": true, "file-read-metadata": true, "file-read-xattr": true,
	"file-write*": true, "file-write-data": true, "file-write-create": true, "file-write-unlink": true,
	"file-write-mode": true, "file-write-owner": true, "file-write-times": true, "file-write-xattr": true,
	"file-write-flags": true, "file-write-setugid": true, "file-ioctl": true,
	"file-link": true, "file-clone": true,
	"network*": true, "network-outbound": true, "network-inbound": true, "network-bind": true,
	"process*": true, "process-exec": true, "process-fork": true, "process-info*": true,
	"signal": true, "mach-priv-task-port": true, "mach-lookup": true,
	"job-creation": true, "lsopen": true, "appleevent-send": true,
	"file-mount": true, "file-unmount": true, "user-preference-write": true,
}

var knownFilters = map[string]bool{
	"subpath": true, "literal": true, "prefix": true, "regex": true,
	"require-all": true, "require-any": true, "require-not": true,
	"vnode-type": true, "target": true, "ioctl-command": true, "remote": true,
}

type sbRule struct {
	allow   bool
	ops     []string
	filters []sx
	line    int
}

type sbProfile struct {
	defaultAllow bool
	rules        []sbRule
	params       map[string]string
	regexes      map[string]*regexp.Regexp // compiled once by checkFilter
}

// parseProfile parses SBPL text and binds its parameters. Every (param)
// must be bound.
func parseProfile(text string, params map[string]string) (*sbProfile, error) {
	top, err := parseSx(text)
	if err != nil {
		return nil, err
	}
	if len(top) == 0 || top[0].String() != "(version 1)" {
		return nil, fmt.Errorf("profile must start with (version 1)")
	}
	p := &sbProfile{params: params, regexes: map[string]*regexp.Regexp{}}
	for _, n := range top[1:] {
		act := n.head()
		if act != "allow" && act != "deny" {
			return nil, fmt.Errorf("line %d: want allow or deny, got %s", n.line, n)
		}
		r := sbRule{allow: act == "allow", line: n.line}
		for _, a := range n.list[1:] {
			if a.kind == sxSym {
				if len(r.filters) > 0 {
					return nil, fmt.Errorf("line %d: operation %s after a filter", a.line, a.atom)
				}
				if !knownOps[a.atom] {
					return nil, fmt.Errorf("line %d: unknown operation %s", a.line, a.atom)
				}
				r.ops = append(r.ops, a.atom)
				continue
			}
			if err := p.checkFilter(a); err != nil {
				return nil, err
			}
			r.filters = append(r.filters, a)
		}
		if len(r.ops) == 0 {
			return nil, fmt.Errorf("line %d: rule without an operation", n.line)
		}
		size := 0
		for _, f := range r.filters {
			size += p.patternBytes(f)
		}
		if size > maxPatternBytes {
			return nil, fmt.Errorf("line %d: rule matches %d bytes of paths, past the %d bytes of one compiled pattern", n.line, size, maxPatternBytes)
		}
		if len(r.ops) == 1 && r.ops[0] == "default" {
			if len(r.filters) > 0 {
				return nil, fmt.Errorf("line %d: default takes no filters", n.line)
			}
			p.defaultAllow = r.allow
			continue
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

// checkFilter validates a filter's shape and resolves its parameters once,
// so a profile with an unbound parameter fails to parse as it would fail to
// load.
func (p *sbProfile) checkFilter(f sx) error {
	h := f.head()
	if !knownFilters[h] {
		return fmt.Errorf("line %d: unknown filter %s", f.line, f)
	}
	switch h {
	case "require-all", "require-any", "require-not":
		if h == "require-not" && len(f.list) != 2 {
			return fmt.Errorf("line %d: require-not takes one filter", f.line)
		}
		for _, c := range f.list[1:] {
			if err := p.checkFilter(c); err != nil {
				return err
			}
		}
		return nil
	case "subpath", "literal", "prefix", "regex":
		if len(f.list) != 2 {
			return fmt.Errorf("line %d: %s takes one argument", f.line, h)
		}
		s, err := p.value(f.list[1])
		if err != nil {
			return err
		}
		if h == "regex" {
			re, err := regexp.Compile(s)
			if err != nil {
				return fmt.Errorf("line %d: %w", f.line, err)
			}
			p.regexes[s] = re
		}
		return nil
	}
	if h == "remote" {
		// (remote ip|tcp|udp "HOST:PORT"): Seatbelt takes only localhost
		// or * for HOST, a number or * for PORT.
		if len(f.list) != 3 || f.list[1].kind != sxSym || f.list[2].kind != sxStr {
			return fmt.Errorf("line %d: remote takes a protocol and \"HOST:PORT\"", f.line)
		}
		switch f.list[1].atom {
		case "ip", "tcp", "udp":
		default:
			return fmt.Errorf("line %d: remote: unknown protocol %s", f.line, f.list[1].atom)
		}
		host, port, ok := strings.Cut(f.list[2].atom, ":")
		if !ok || host != "localhost" && host != "*" {
			return fmt.Errorf("line %d: remote: host must be localhost or * (got %q)", f.line, f.list[2].atom)
		}
		if n, err := strconv.Atoi(port); port != "*" && (err != nil || n < 1 || n > 65535) {
			return fmt.Errorf("line %d: remote: port must be a number or * (got %q)", f.line, port)
		}
		return nil
	}
	if len(f.list) != 2 || f.list[1].kind != sxSym {
		return fmt.Errorf("line %d: %s takes one symbol", f.line, h)
	}
	if h == "ioctl-command" {
		// Only a number compiles on every release: ioctl names are
		// variables that macOS 13 and 14 do not bind.
		if _, err := strconv.ParseUint(f.list[1].atom, 10, 32); err != nil {
			return fmt.Errorf("line %d: unbound variable: %s (an ioctl command must be a number on macOS 13 and 14)", f.line, f.list[1].atom)
		}
	}
	return nil
}

// patternBytes is the bytes of path a filter matches: its strings, summed
// through require-all, -any and -not.
func (p *sbProfile) patternBytes(f sx) int {
	switch f.head() {
	case "require-all", "require-any", "require-not":
		n := 0
		for _, c := range f.list[1:] {
			n += p.patternBytes(c)
		}
		return n
	case "subpath", "literal", "prefix", "regex":
		s, _ := p.value(f.list[1]) // checked by checkFilter
		return len(s)
	}
	return 0
}

// value evaluates a string expression: a string, a regex literal,
// (param "NAME") or (string-append ...).
func (p *sbProfile) value(n sx) (string, error) {
	switch n.kind {
	case sxStr, sxRegex:
		return n.atom, nil
	case sxList:
		switch n.head() {
		case "param":
			if len(n.list) != 2 || n.list[1].kind != sxStr {
				return "", fmt.Errorf("line %d: bad %s", n.line, n)
			}
			v, ok := p.params[n.list[1].atom]
			if !ok {
				return "", fmt.Errorf("line %d: parameter %q is not bound", n.line, n.list[1].atom)
			}
			return v, nil
		case "string-append":
			var b strings.Builder
			for _, c := range n.list[1:] {
				s, err := p.value(c)
				if err != nil {
					return "", err
				}
				b.WriteString(s)
			}
			return b.String(), nil
		}
	}
	return "", fmt.Errorf("line %d: not a string expression: %s", n.line, n)
}

// sbQuery is one access: an operation on a resolved path, and for creates
// the type of the node being created.
type sbQuery struct {
	op    string
	path  string
	vnode string // REGULAR-FILE, DIRECTORY, SYMLINK; "" when unknown
	ioctl uint64 // the command of a file-ioctl
	// proto ("tcp", "udp", "unix") and remote ("HOST:PORT", HOST
	// "localhost" for a loopback address) of a network operation
	proto, remote string
}

// opMatches reports whether a rule's operation covers the queried one:
// equal, or a wildcard whose stem prefixes it.
func opMatches(rule, op string) bool {
	if stem, ok := strings.CutSuffix(rule, "*"); ok {
		return strings.HasPrefix(op, stem)
	}
	return rule == op
}

// allowed evaluates q with last-match-wins and returns the decision and
// the line of the deciding rule (0 for the default).
func (p *sbProfile) allowed(q sbQuery) (bool, int, error) {
	if !knownOps[q.op] || strings.HasSuffix(q.op, "*") {
		return false, 0, fmt.Errorf("query: %s is not a concrete operation", q.op)
	}
	dec, line := p.defaultAllow, 0
	for _, r := range p.rules {
		hit := false
		for _, o := range r.ops {
			if opMatches(o, q.op) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if len(r.filters) > 0 {
			any := false
			for _, f := range r.filters {
				ok, err := p.match(f, q)
				if err != nil {
					return false, 0, err
				}
				if ok {
					any = true
					break
				}
			}
			if !any {
				continue
			}
		}
		dec, line = r.allow, r.line
	}
	return dec, line, nil
}

func (p *sbProfile) match(f sx, q sbQuery) (bool, error) {
	switch h := f.head(); h {
	case "require-all":
		for _, c := range f.list[1:] {
			ok, err := p.match(c, q)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case "require-any":
		for _, c := range f.list[1:] {
			ok, err := p.match(c, q)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case "require-not":
		ok, err := p.match(f.list[1], q)
		return !ok, err
	case "subpath", "literal", "prefix", "regex":
		s, err := p.value(f.list[1])
		if err != nil {
			return false, err
		}
		switch h {
		case "literal":
			return q.path == s, nil
		case "prefix":
			return strings.HasPrefix(q.path, s), nil
		case "regex":
			return p.regexes[s].MatchString(q.path), nil
		}
		s = strings.TrimSuffix(s, "/")
		return q.path == s || s == "" || strings.HasPrefix(q.path, s+"/"), nil
	case "vnode-type":
		return q.vnode == f.list[1].atom, nil
	case "ioctl-command":
		n, _ := strconv.ParseUint(f.list[1].atom, 10, 32) // checked by checkFilter
		return q.op == "file-ioctl" && q.ioctl == n, nil
	case "remote":
		proto := f.list[1].atom
		if q.proto != proto && !(proto == "ip" && (q.proto == "tcp" || q.proto == "udp")) {
			return false, nil
		}
		wh, wp, _ := strings.Cut(f.list[2].atom, ":")
		qh, qp, _ := strings.Cut(q.remote, ":")
		return (wh == "*" || wh == qh) && (wp == "*" || wp == qp), nil
	default:
		return false, fmt.Errorf("line %d: cannot evaluate %s for %s %s", f.line, f, q.op, q.path)
	}
}
