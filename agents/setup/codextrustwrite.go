package setup

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// CodexTrust is the change to the config.toml at config that trusts
// cordon's hooks in src, the hooks.json at hooks (as it is, or as init is
// about to write it), as Codex 0.171 records the user's "Trust all and
// continue": a table [hooks.state."<key>"] with trusted_hash, one per
// hook, appended; a state whose one key is a trusted_hash (of the hook
// init wrote before, with other flags) gets the new hash instead. Every
// other byte stays. It refuses a config it cannot parse (a *ParseError),
// any other state the user set (disabled, or more than a hash: decided in
// Codex's /hooks), a hook whose hash cordon cannot compute, and a config
// whose hooks.state the appended tables would not extend (an inline
// table): the result is parsed again and must trust each hook. No cordon
// hook in hooks is an error.
func CodexTrust(hooks string, src []byte, config string) (*Change, error) {
	refs, err := codexCordonHooks(hooks, src)
	if err != nil {
		return nil, fmt.Errorf("trust the hooks in %s: %w", hooks, err)
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("trust the hooks in %s: it holds no cordon hook", hooks)
	}
	a, _ := Lookup("codex")
	c, err := read(a, config)
	if err != nil {
		return nil, err
	}
	if !c.Existed {
		c.Mode = 0o600
	}
	states, err := tomlStates(c.Old)
	if err != nil {
		return nil, &ParseError{Path: config, Err: err}
	}
	// A table header cannot extend an inline table (TOML 1.0), which
	// Codex's reader holds to and BurntSushi's does not: refused, as
	// what cordon would write could break the user's config.
	if inlineHooks.Match(c.Old) {
		return nil, fmt.Errorf("trust the hooks in %s: %s gives hooks or hooks.state as an inline table, which cordon cannot extend; trust them in codex's /hooks", hooks, config)
	}
	doc := string(c.Old)
	var add strings.Builder
	for _, h := range refs {
		if !h.known {
			return nil, fmt.Errorf("trust %s: cordon cannot compute Codex's hash of this hook (a field it does not know); trust it in codex's /hooks", h.key)
		}
		st, ok := states[h.key]
		switch got, _ := st["trusted_hash"].(string); {
		case got == h.hash:
			continue
		case len(st) == 1 && got != "" && strings.Count(doc, got) == 1:
			// Trusted for an earlier cordon hook (init run again with
			// other flags): that hash, written once, is replaced.
			doc = strings.Replace(doc, got, h.hash, 1)
			continue
		case ok:
			return nil, fmt.Errorf("trust %s: %s has a state for it already ([hooks.state.%q]); decide it in codex's /hooks, or remove that table and run again", h.key, config, h.key)
		}
		fmt.Fprintf(&add, "\n[hooks.state.%s]\ntrusted_hash = %s\n", tomlQuote(h.key), tomlQuote(h.hash))
	}
	if add.Len() > 0 && len(doc) > 0 && !strings.HasSuffix(doc, "\n") {
		doc += "\n"
	}
	c.New = []byte(doc + add.String())
	if !c.Changed() {
		return c, nil
	}
	got, err := tomlStates(c.New)
	for _, h := range refs {
		if err == nil && got[h.key]["trusted_hash"] != h.hash {
			err = errors.New("the appended tables do not reach hooks.state")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("trust the hooks in %s: %s defines hooks.state in a form cordon cannot extend (%v); trust them in codex's /hooks", hooks, config, err)
	}
	return c, nil
}

// inlineHooks finds a key hooks or state given an inline table (a line
// "hooks = {", "hooks.state = {", "state = {"): more than it must, which
// only refuses.
var inlineHooks = regexp.MustCompile(`(?m)^[^#\n]*\b"?(hooks|state)"?\s*=\s*\{`)

// tomlStates are the [hooks.state] tables of the TOML document src.
func tomlStates(src []byte) (map[string]map[string]any, error) {
	var doc struct {
		Hooks struct {
			State map[string]map[string]any `toml:"state"`
		} `toml:"hooks"`
	}
	_, err := toml.Decode(string(src), &doc)
	return doc.Hooks.State, err
}

// tomlQuote is s as a TOML basic string: '"', '\\', the control
// characters and DEL escaped, everything else as it is.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
