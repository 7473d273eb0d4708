package setup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CodexTrustFix is what the user runs so that Codex runs cordon's hook.
const CodexTrustFix = "run 'cordon init codex --trust' (with --user if the hook is yours), " +
	"or start 'codex' once in a terminal: at \"Hooks need review\" choose \"Trust all and continue\" " +
	"(or open /hooks and trust cordon's PreToolUse hook); until then 'codex exec' runs every call without it"

// CodexUntrusted says why Codex would not run cordon's hooks in the
// hooks.json at path for want of trust, "" when it would run each. Codex
// (0.171, codex-rs/hooks discovery) runs a user's or project's hook only
// when [hooks.state."<key>"] in its configuration has a trusted_hash equal
// to the hook's current hash, and none whose state says enabled = false;
// the key is "<hooks.json>:<event>:<group>:<handler>" (event in snake
// case, indices from 0), the hash codexHookHash. configs are the
// config.toml files whose hooks.state Codex merges (the user's, the
// project's). fix is the stanza that trusts them, for the user to add.
func CodexUntrusted(path string, configs []string) (why, fix string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", ""
	}
	hooks, err := codexCordonHooks(path, b)
	if err != nil || len(hooks) == 0 {
		return "", ""
	}
	states, why := codexStates(configs)
	if why != "" {
		return why, ""
	}
	var whys, stanzas []string
	for _, h := range hooks {
		st := states[h.key]
		if on, ok := st["enabled"].(bool); ok && !on {
			whys = append(whys, fmt.Sprintf("its state [hooks.state.%q] says enabled = false", h.key))
			continue
		}
		got, _ := st["trusted_hash"].(string)
		switch {
		case got == "":
			whys = append(whys, fmt.Sprintf("Codex has no trust decision for it ([hooks.state.%q] has no trusted_hash)", h.key))
		case h.known && got != h.hash:
			whys = append(whys, fmt.Sprintf("its trust [hooks.state.%q] was given to another version of it (Codex calls it modified)", h.key))
		default:
			continue
		}
		if h.known {
			stanzas = append(stanzas, fmt.Sprintf("the table [hooks.state.%q] with the line trusted_hash = %q", h.key, h.hash))
		}
	}
	if len(whys) == 0 {
		return "", ""
	}
	fix = CodexTrustFix
	if len(stanzas) > 0 && len(configs) > 0 {
		fix += "; or add to " + configs[len(configs)-1] + " what Codex would write: " + strings.Join(stanzas, "; ")
	}
	return strings.Join(whys, "; "), fix
}

// codexHookRef is one of cordon's hooks in a hooks.json: its trust key
// and the hash Codex trusts it by (known false: not computable).
type codexHookRef struct {
	key, hash string
	known     bool
}

// codexCordonHooks are cordon's PreToolUse and PostToolUse hooks in b,
// the hooks.json at path.
func codexCordonHooks(path string, b []byte) ([]codexHookRef, error) {
	var file struct {
		Hooks map[string][]struct {
			Matcher *string           `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	var out []codexHookRef
	for _, event := range []string{"PreToolUse", "PostToolUse"} {
		for gi, g := range file.Hooks[event] {
			for hi, raw := range g.Hooks {
				var h struct {
					Command string `json:"command"`
				}
				if json.Unmarshal(raw, &h) != nil {
					continue
				}
				if _, _, ok := CordonHook(h.Command); !ok {
					continue
				}
				hash, known := codexHookHash(snake(event), g.Matcher, raw)
				out = append(out, codexHookRef{fmt.Sprintf("%s:%s:%d:%d", abs, snake(event), gi, hi), hash, known})
			}
		}
	}
	return out, nil
}

// codexStates merges the [hooks.state] tables of configs, as Codex does.
func codexStates(configs []string) (map[string]map[string]any, string) {
	states := map[string]map[string]any{}
	for _, c := range configs {
		src, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		st, err := tomlStates(src)
		if err != nil {
			return nil, fmt.Sprintf("%s has TOML cordon cannot read (%v): Codex's trust in the hook is unknown", c, err)
		}
		for k, v := range st {
			states[k] = v
		}
	}
	return states, ""
}

// codexHookHash is the hash Codex trusts a command hook by
// (codex-rs/hooks discovery, command_hook_hash, and config's
// version_for_toml): SHA-256 of the JSON, keys sorted and compact, of the
// hook's normalized identity: its event, its group's matcher and the one
// handler, its timeout defaulted to 600 s. A handler with a field cordon
// does not know the normalized form of is not hashed (known false).
func codexHookHash(event string, matcher *string, raw json.RawMessage) (hash string, known bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return "", false
	}
	var h struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Timeout *float64 `json:"timeout"`
		Async   bool     `json:"async"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Type != "command" {
		return "", false
	}
	for k := range fields {
		if k != "type" && k != "command" && k != "timeout" && k != "async" {
			return "", false
		}
	}
	timeout := 600.0
	if h.Timeout != nil {
		timeout = max(1, *h.Timeout)
	}
	if timeout != float64(int64(timeout)) {
		return "", false
	}
	var b strings.Builder
	b.WriteString(`{"event_name":` + serdeString(event) + `,"hooks":[{"async":` + strconv.FormatBool(h.Async) +
		`,"command":` + serdeString(h.Command) + `,"timeout":` + strconv.FormatInt(int64(timeout), 10) + `,"type":"command"}]`)
	if matcher != nil {
		b.WriteString(`,"matcher":` + serdeString(*matcher))
	}
	b.WriteString("}")
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:]), true
}

// serdeString is s as serde_json writes a string: only '"', '\\' and the
// control characters below U+0020 escaped (the usual short forms, else
// \u00xx in lower case); everything else, U+2028 included, as it is.
func serdeString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// snake is Codex's label of a hook event in a trust key.
func snake(event string) string {
	var out []byte
	for i := 0; i < len(event); i++ {
		c := event[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				out = append(out, '_')
			}
			c += 'a' - 'A'
		}
		out = append(out, c)
	}
	return string(out)
}

// CodexConfigs are the config.toml files whose hooks.state Codex reads
// for the hooks of a user (CODEX_HOME, else ~/.codex) and of project.
func CodexConfigs(home, project string, getenv func(string) string) []string {
	var out []string
	if filepath.IsAbs(project) {
		out = append(out, filepath.Join(project, ".codex", "config.toml"))
	}
	if d := getenv("CODEX_HOME"); filepath.IsAbs(d) {
		out = append(out, filepath.Join(d, "config.toml"))
	} else if filepath.IsAbs(home) {
		out = append(out, filepath.Join(home, ".codex", "config.toml"))
	}
	return out
}
