// Package netpolicy is the network allowlist of a sandbox: which hosts
// and ports the sandbox may reach through cordon's proxy
// (docs/design.md, "The network allowlist"). It is pure: patterns, their
// presets, the decision for a host and port the client asked for, and the
// address ranges a name must not lead to unless a pattern names it
// exactly. Package netproxy enforces it.
//
// # Patterns
//
//	example.com        the host itself, ports 80 and 443
//	*.example.com      every subdomain (not example.com itself), 80 and 443
//	example.com:8443   the host, that port only
//	10.0.0.5:5432      an IP literal: only a client asking for that address
//	[::1]:8080         an IPv6 literal, with brackets when a port follows
//	@npm               a preset, a documented list of patterns (Presets)
//
// Hosts are matched as the client spelled them (lower-cased, a trailing
// dot removed), never by the address they resolve to: an allowed name does
// not allow its IP, and an allowed IP does not allow the names that
// resolve to it. A deny pattern wins over every allow pattern; a deny
// pattern without a port denies every port.
package netpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Pattern is one parsed allow or deny pattern.
type Pattern struct {
	// Host is the lower-cased name without "*." (or the canonical IP).
	Host string
	// Wildcard: the pattern was "*.Host" and matches subdomains only.
	Wildcard bool
	// IP is set when Host is an IP literal.
	IP netip.Addr
	// Port is the one port the pattern allows; 0 means the defaults
	// (80 and 443) in an allow pattern, every port in a deny pattern.
	Port int
	// Text is the pattern as given (the preset's own entry for a preset).
	Text string
	// Preset names the preset the pattern came from ("@npm"), or "".
	Preset string
}

// DefaultPorts are what a pattern without a port allows.
var DefaultPorts = []int{80, 443}

// String is the pattern as a user would write it, with its preset.
func (p Pattern) String() string {
	if p.Preset != "" {
		return p.Text + " (" + p.Preset + ")"
	}
	return p.Text
}

// Literal reports whether p names its host exactly, as the user wrote
// it: not through a wildcard, and not from a preset (whose hosts are
// public registries that never live at an internal address). Only such a
// pattern lets a host reach loopback, private and other internal
// addresses (see Internal): the user named that host, and so trusts
// where its DNS leads.
func (p Pattern) Literal() bool { return !p.Wildcard && p.Preset == "" }

// ErrPattern is wrapped by every error about a malformed pattern.
var ErrPattern = errors.New("bad network pattern")

// Parse parses one pattern, expanding a preset into its patterns.
func Parse(s string) ([]Pattern, error) {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrPattern, s, why) }
	if strings.HasPrefix(s, "@") {
		list, ok := Presets[s]
		if !ok {
			return nil, bad("no such preset; known: " + strings.Join(PresetNames(), ", "))
		}
		var out []Pattern
		for _, e := range list.Patterns {
			p, err := parseOne(e)
			if err != nil {
				panic(fmt.Sprintf("netpolicy: preset %s: %v", s, err))
			}
			p.Preset = s
			out = append(out, p)
		}
		return out, nil
	}
	p, err := parseOne(s)
	if err != nil {
		return nil, bad(err.Error())
	}
	return []Pattern{p}, nil
}

func parseOne(s string) (Pattern, error) {
	p := Pattern{Text: s}
	if err := checkShape(s); err != nil {
		return p, err
	}
	host, port, err := splitHostPort(s)
	if err != nil {
		return p, err
	}
	if port != "" || strings.HasSuffix(s, ":") {
		if p.Port, err = parsePort(port); err != nil {
			return p, err
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return p, errors.New("an IPv6 zone has no meaning here")
		}
		p.IP = a.Unmap()
		p.Host = p.IP.String()
		return p, nil
	}
	if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
		return p, errors.New("not an IPv6 address (put an IPv6 literal with a port in brackets: [::1]:8080)")
	}
	return parseHostName(p, host)
}

// checkShape refuses what is not a host with an optional port at all.
func checkShape(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("empty pattern")
	case strings.TrimSpace(s) != s:
		return errors.New("spaces around the pattern")
	case strings.Contains(s, "://"):
		return errors.New("a pattern is a host, not a URL: drop the scheme (example.com or example.com:8443)")
	case strings.ContainsAny(s, "/?#@"):
		return errors.New("a pattern is a host with an optional :PORT, no path or user")
	}
	return nil
}

// splitHostPort splits host[:port], [ipv6][:port] or a bare IPv6
// literal; port is "" when none is given.
func splitHostPort(s string) (host, port string, err error) {
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", errors.New("unclosed [ in an IPv6 literal")
		}
		host, port = s[1:end], s[end+1:]
		if port != "" {
			if !strings.HasPrefix(port, ":") {
				return "", "", errors.New("after ] only :PORT may follow")
			}
			port = port[1:]
		}
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return "", "", errors.New("[...] must hold an IPv6 address")
		}
		return host, port, nil
	case strings.Count(s, ":") > 1:
		// A bare IPv6 literal, no port (a port needs brackets).
		return s, "", nil
	case strings.Contains(s, ":"):
		host, port, _ = strings.Cut(s, ":")
		return host, port, nil
	}
	return s, "", nil
}

// parsePort accepts a port number in its plain decimal form.
func parsePort(port string) (int, error) {
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return 0, fmt.Errorf("port %q out of range: want 1 to 65535", port)
	}
	return n, nil
}

// parseHostName completes p for a host name, lower-cased, without a
// trailing dot, "*." (its subdomains) leading it or not.
func parseHostName(p Pattern, host string) (Pattern, error) {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "*" {
		return p, errors.New("* alone would allow every host; name the hosts (a preset such as @npm, or *.example.com)")
	}
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		p.Wildcard = true
		h = rest
	}
	if strings.Contains(h, "*") {
		return p, errors.New("* is allowed only as the first label (*.example.com)")
	}
	if err := checkName(h); err != nil {
		return p, err
	}
	if p.Wildcard {
		if _, err := netip.ParseAddr(h); err == nil {
			return p, errors.New("*. cannot precede an IP address")
		}
	}
	p.Host = h
	return p, nil
}

// checkName accepts DNS names as resolvers do: labels of letters, digits,
// '-' and '_' (ASCII; use the xn-- form of an international name).
func checkName(h string) error {
	if h == "" {
		return errors.New("no host")
	}
	if len(h) > 253 {
		return errors.New("host name longer than 253 characters")
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 {
			return errors.New("empty label or one longer than 63 characters")
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("character %q in host name (ASCII letters, digits, '-', '_' and '.'; write international names in their xn-- form)", c)
			}
		}
	}
	return nil
}

// Policy is a sandbox's network allowlist. The zero Policy allows nothing.
type Policy struct {
	Allow []Pattern
	Deny  []Pattern
}

// New parses allow and deny patterns (presets expanded). Every error
// names the pattern and wraps ErrPattern.
func New(allow, deny []string) (*Policy, error) {
	p := &Policy{}
	for _, l := range []struct {
		in   []string
		out  *[]Pattern
		flag string
	}{{allow, &p.Allow, "--allow-domain"}, {deny, &p.Deny, "--deny-domain"}} {
		for _, s := range l.in {
			ps, err := Parse(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.flag, err)
			}
			*l.out = append(*l.out, ps...)
		}
	}
	return p, nil
}

// Patterns are the patterns as given, for the JSON form and 'cordon
// profile': presets once each, by name.
func patterns(ps []Pattern) []string {
	var out []string
	for _, p := range ps {
		t := p.Text
		if p.Preset != "" {
			t = p.Preset
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// AllowText and DenyText are the patterns as the user gave them.
func (p *Policy) AllowText() []string { return patterns(p.Allow) }
func (p *Policy) DenyText() []string  { return patterns(p.Deny) }

// File is the JSON form of a policy: the "network" object of a policy
// file ({"allowDomains": [...], "denyDomains": [...]}). policy.ParseFile
// decodes it with the rest of the file: each key in its exact spelling,
// once.
type File struct {
	AllowDomains []string `json:"allowDomains,omitempty"`
	DenyDomains  []string `json:"denyDomains,omitempty"`
}

// MarshalJSON writes the File form, presets by name.
func (p *Policy) MarshalJSON() ([]byte, error) {
	return json.Marshal(File{AllowDomains: p.AllowText(), DenyDomains: p.DenyText()})
}

// Decision is the verdict on one host and port a client asked for.
type Decision struct {
	Allowed bool
	// Pattern is the pattern that decided (nil when no pattern matched:
	// refused).
	Pattern *Pattern
	// Deny: Pattern is a deny pattern.
	Deny bool
	// Literal: an allow pattern names the host exactly, so it may
	// resolve to internal addresses (see Internal).
	Literal bool
}

// Rule says in words what decided, for events and messages.
func (d Decision) Rule() string {
	switch {
	case d.Pattern == nil:
		return "no pattern allows it"
	case d.Deny:
		return "--deny-domain " + d.Pattern.String()
	}
	return "--allow-domain " + d.Pattern.String()
}

// Normalize is the spelling host is matched in: lower case, no trailing
// dot, an IP literal in its canonical form (IPv4-mapped IPv6 unmapped),
// brackets removed.
func Normalize(host string) string {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil && a.Zone() == "" {
		return a.Unmap().String()
	}
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

func (p Pattern) matches(host string, port int, deny bool) bool {
	switch {
	case p.Port != 0 && p.Port != port:
		return false
	case p.Port == 0 && !deny && !slices.Contains(DefaultPorts, port):
		return false
	case p.Wildcard:
		return strings.HasSuffix(host, "."+p.Host)
	}
	return host == p.Host
}

// ValidHost reports whether h, a Normalize'd host, is something a
// pattern can name: an IP literal without a zone, or a DNS name of
// letters, digits, '-' and '_'. Anything else ("::ffff:1.2.3.4%x.example.com",
// an IPv6 literal whose zone happens to end in an allowed suffix) must
// match no pattern: it is neither the name a wildcard means nor an
// address a pattern names.
func ValidHost(h string) bool {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Zone() == ""
	}
	if strings.Contains(h, "%") {
		return false
	}
	return checkName(h) == nil
}

// Decide is the verdict on host:port, host as the client asked for it.
func (p *Policy) Decide(host string, port int) Decision {
	h := Normalize(host)
	if p == nil || !ValidHost(h) {
		return Decision{}
	}
	for i := range p.Deny {
		if p.Deny[i].matches(h, port, true) {
			return Decision{Pattern: &p.Deny[i], Deny: true}
		}
	}
	d := Decision{}
	for i := range p.Allow {
		a := &p.Allow[i]
		if !a.matches(h, port, false) {
			continue
		}
		if !d.Allowed || a.Literal() && !d.Literal {
			d = Decision{Allowed: true, Pattern: a, Literal: a.Literal()}
		}
	}
	return d
}

// Suggest is the pattern that would allow host:port, for a refusal's
// message.
func Suggest(host string, port int) string {
	h := Normalize(host)
	if a, err := netip.ParseAddr(h); err == nil && a.Is6() {
		h = "[" + h + "]"
	}
	if slices.Contains(DefaultPorts, port) {
		return h
	}
	return h + ":" + strconv.Itoa(port)
}
