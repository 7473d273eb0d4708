package netpolicy

import (
	"net/netip"
	"slices"
	"strings"
)

// internalRanges are addresses a name must not lead to unless a pattern
// names the host exactly: the host itself, the LAN, the cloud's metadata
// endpoint, and what no public host can be. Without this guard, an
// allowed name whose DNS answer the attacker controls (a registry's
// package page, a CDN name under *.example.com) would reach them.
var internalRanges = []struct {
	prefix netip.Prefix
	name   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this network)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (and broadcast)"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (private)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Internal reports whether a is an address only a literal pattern may
// reach, and names its range. IPv4 addresses embedded in IPv6 (mapped,
// NAT64 64:ff9b::/96, 6to4 2002::/16) are judged as the IPv4 address they
// carry.
func Internal(a netip.Addr) (string, bool) {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
			v4 = netip.AddrFrom4([4]byte(b[12:16]))
		case netip.MustParsePrefix("2002::/16").Contains(a):
			v4 = netip.AddrFrom4([4]byte(b[2:6]))
		}
		if v4.IsValid() {
			if n, ok := Internal(v4); ok {
				return n + " (embedded in " + a.String() + ")", true
			}
		}
	}
	for _, r := range internalRanges {
		if r.prefix.Contains(a) {
			return r.name, true
		}
	}
	return "", false
}

// IsLocalhost reports whether host is localhost or a name under
// .localhost, which the proxy resolves to loopback itself without asking
// DNS (RFC 6761): such a name never leaves the host.
func IsLocalhost(host string) bool {
	h := Normalize(host)
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// Preset is a named list of patterns (--allow-domain @NAME).
type Preset struct {
	Summary  string
	Patterns []string
}

// Presets are the named pattern lists. Each lists the hosts the tool's
// default configuration fetches from; mirrors and private registries need
// their own patterns.
var Presets = map[string]Preset{
	"@npm": {"the npm registry (npm, yarn, pnpm)",
		[]string{"registry.npmjs.org", "registry.yarnpkg.com", "registry.npmjs.com"}},
	"@pypi": {"the Python Package Index (pip, uv, poetry)",
		[]string{"pypi.org", "files.pythonhosted.org"}},
	"@go": {"the Go module proxy and checksum database (go mod download)",
		[]string{"proxy.golang.org", "sum.golang.org", "storage.googleapis.com"}},
	"@crates": {"crates.io (cargo)",
		[]string{"crates.io", "index.crates.io", "static.crates.io", "static.rust-lang.org"}},
	"@github": {"GitHub: git over HTTPS and SSH, the API, release and raw downloads",
		[]string{"github.com", "github.com:22", "ssh.github.com:443", "api.github.com", "codeload.github.com",
			"objects.githubusercontent.com", "raw.githubusercontent.com", "release-assets.githubusercontent.com"}},
	// The agents' APIs (cordon run --agent): the API itself, and where a
	// subscription sign-in refreshes its token.
	"@anthropic": {"Anthropic's API for Claude Code (api.anthropic.com), and its sign-in's token refresh",
		[]string{"api.anthropic.com", "platform.claude.com", "claude.ai"}},
	"@openai": {"OpenAI's API for Codex (api.openai.com), and ChatGPT sign-in's backend and token refresh",
		[]string{"api.openai.com", "chatgpt.com", "auth.openai.com"}},
	"@gemini": {"the Gemini API for Gemini CLI, Code Assist (sign-in with Google), and its token refresh",
		[]string{"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"}},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var out []string
	for n := range Presets {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
