package netpolicy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty pattern"},
		{"  ", "empty pattern"},
		{"*", "* alone"},
		{"*:443", "* alone"},
		{"https://example.com", "drop the scheme"},
		{"example.com/path", "no path"},
		{"user@example.com", "no path or user"},
		{"example.com:0", "out of range"},
		{"example.com:65536", "out of range"},
		{"example.com:", "out of range"},
		{"example.com:08", "out of range"},
		{"example.com:http", "out of range"},
		{"a.*.example.com", "first label"},
		{"*.10.0.0.1", "cannot precede an IP"},
		{"exa mple.com", "character"},
		{"ex\u00e4mple.com", "xn--"},
		{"a..b", "empty label"},
		{"[::1", "unclosed"},
		{"[example.com]:80", "IPv6"},
		{"fe80::1%eth0", "zone"},
		{"@nope", "no such preset"},
		{strings.Repeat("a", 64) + ".com", "63"},
	} {
		_, err := Parse(tc.in)
		require.Error(t, err, "%q", tc.in)
		require.True(t, errors.Is(err, ErrPattern), "%q: %v", tc.in, err)
		require.Contains(t, err.Error(), tc.want, "%q", tc.in)
		require.Contains(t, err.Error(), "\""+tc.in+"\"", "the error names the input")
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Pattern
	}{
		{"Example.COM.", Pattern{Host: "example.com"}},
		{"*.example.com:8443", Pattern{Host: "example.com", Wildcard: true, Port: 8443}},
		{"10.0.0.5:5432", Pattern{Host: "10.0.0.5", IP: netip.MustParseAddr("10.0.0.5"), Port: 5432}},
		{"[::1]:8080", Pattern{Host: "::1", IP: netip.MustParseAddr("::1"), Port: 8080}},
		{"::1", Pattern{Host: "::1", IP: netip.MustParseAddr("::1")}},
		{"[::ffff:10.0.0.1]", Pattern{Host: "10.0.0.1", IP: netip.MustParseAddr("10.0.0.1")}},
		{"localhost:65535", Pattern{Host: "localhost", Port: 65535}},
	} {
		ps, err := Parse(tc.in)
		require.NoError(t, err, tc.in)
		require.Len(t, ps, 1)
		tc.want.Text = tc.in
		require.Equal(t, tc.want, ps[0], tc.in)
	}
}

func TestPresetsParse(t *testing.T) {
	for _, n := range PresetNames() {
		ps, err := Parse(n)
		require.NoError(t, err, n)
		require.NotEmpty(t, ps, n)
		for _, p := range ps {
			require.Equal(t, n, p.Preset)
		}
	}
	p, err := New([]string{"@npm"}, nil)
	require.NoError(t, err)
	require.True(t, p.Decide("registry.npmjs.org", 443).Allowed)
	require.Equal(t, "--allow-domain registry.npmjs.org (@npm)", p.Decide("registry.npmjs.org", 443).Rule())
	require.Equal(t, []string{"@npm"}, p.AllowText())
	require.False(t, p.Decide("registry.npmjs.org", 443).Literal, "a preset's host never reaches internal addresses")
}

func TestDecide(t *testing.T) {
	p, err := New([]string{"example.com", "*.cdn.example.net", "api.example.org:8443", "10.1.2.3:5432", "localhost:3000"},
		[]string{"bad.cdn.example.net", "example.com:443"})
	require.NoError(t, err)
	for _, tc := range []struct {
		host    string
		port    int
		allowed bool
		literal bool
		rule    string
	}{
		{"example.com", 80, true, true, "--allow-domain example.com"},
		{"EXAMPLE.com.", 80, true, true, "--allow-domain example.com"},
		{"example.com", 443, false, false, "--deny-domain example.com:443"}, // deny wins
		{"example.com", 8080, false, false, "no pattern allows it"},         // other port
		{"www.example.com", 80, false, false, "no pattern allows it"},       // no subdomains without *.
		{"a.cdn.example.net", 443, true, false, "--allow-domain *.cdn.example.net"},
		{"a.b.cdn.example.net", 80, true, false, "--allow-domain *.cdn.example.net"},
		{"cdn.example.net", 443, false, false, "no pattern allows it"}, // *. is subdomains only
		{"bad.cdn.example.net", 443, false, false, "--deny-domain bad.cdn.example.net"},
		{"bad.cdn.example.net", 9999, false, false, "--deny-domain bad.cdn.example.net"}, // deny without port: every port
		{"xcdn.example.net", 443, false, false, "no pattern allows it"},
		{"api.example.org", 8443, true, true, "--allow-domain api.example.org:8443"},
		{"api.example.org", 443, false, false, "no pattern allows it"},
		{"10.1.2.3", 5432, true, true, "--allow-domain 10.1.2.3:5432"},
		{"[::ffff:10.1.2.3]", 5432, true, true, "--allow-domain 10.1.2.3:5432"},
		{"93.184.216.34", 443, false, false, "no pattern allows it"}, // an IP is not its name
		{"localhost", 3000, true, true, "--allow-domain localhost:3000"},
	} {
		d := p.Decide(tc.host, tc.port)
		require.Equal(t, tc.allowed, d.Allowed, "%s:%d", tc.host, tc.port)
		require.Equal(t, tc.literal, d.Literal, "%s:%d", tc.host, tc.port)
		require.Equal(t, tc.rule, d.Rule(), "%s:%d", tc.host, tc.port)
	}
	var none *Policy
	require.False(t, none.Decide("example.com", 443).Allowed)
}

func TestLiteralBeatsWildcard(t *testing.T) {
	p, err := New([]string{"*.corp.example", "git.corp.example"}, nil)
	require.NoError(t, err)
	d := p.Decide("git.corp.example", 443)
	require.True(t, d.Allowed && d.Literal, "%+v", d)
	require.False(t, p.Decide("wiki.corp.example", 443).Literal)
}

func TestInternal(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
		"0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fd00::1", "fe80::1", "ff02::1",
		"::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "2002:a00:1::1"} {
		name, ok := Internal(netip.MustParseAddr(a))
		require.True(t, ok, a)
		require.NotEmpty(t, name, a)
	}
	for _, a := range []string{"93.184.216.34", "1.1.1.1", "2606:4700::1111", "64:ff9b::101:101", "172.32.0.1", "100.128.0.1"} {
		_, ok := Internal(netip.MustParseAddr(a))
		require.False(t, ok, a)
	}
	n, _ := Internal(netip.MustParseAddr("169.254.169.254"))
	require.Contains(t, n, "metadata")
}

func TestSuggest(t *testing.T) {
	require.Equal(t, "example.com", Suggest("Example.com.", 443))
	require.Equal(t, "example.com:22", Suggest("example.com", 22))
	require.Equal(t, "[::1]:8080", Suggest("::1", 8080))
	for _, s := range []string{Suggest("example.com", 22), Suggest("::1", 8080), Suggest("::1", 80)} {
		_, err := Parse(s)
		require.NoError(t, err, "a suggestion must be a valid pattern: %s", s)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"example.com", "*.a.b:80", "[::1]:1", "10.0.0.1", "@npm", "*", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := Parse(s)
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.Host == "" || strings.Contains(p.Host, "*") || p.Port < 0 || p.Port > 65535 {
				t.Fatalf("%q parsed to %+v", s, p)
			}
		}
	})
}

func TestZonedLiteralMatchesNoWildcard(t *testing.T) {
	p, err := New([]string{"*.example.com", "*.example.com:8443", "example.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"::ffff:1.2.3.4%x.example.com", "[2a00::1%x.example.com]", "fe80::1%a.example.com", "a%b.example.com", "a/b.example.com"} {
		for _, port := range []int{80, 443, 8443} {
			if d := p.Decide(h, port); d.Allowed {
				t.Errorf("Decide(%q, %d) allowed by %s", h, port, d.Rule())
			}
		}
	}
	if d := p.Decide("A.Example.com.", 443); !d.Allowed {
		t.Errorf("a plain subdomain is refused")
	}
}
