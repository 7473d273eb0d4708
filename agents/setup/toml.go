package setup

import "github.com/BurntSushi/toml"

// tomlFalse reports whether the TOML document src sets the key path want
// (e.g. features.hooks) to false, however TOML spells it (a table header,
// dotted keys, an inline table, quoted keys). A document that is not
// valid TOML is an error, never a quiet "no": Codex refuses to start on
// one, and cordon cannot say what it would have meant. It reads with a
// maintained TOML parser (BurntSushi/toml), not a reader of its own: the
// verdict is what a real TOML reader makes of the file.
func tomlFalse(src string, want []string) (bool, error) {
	b, err := tomlBool(src, want)
	return b != nil && !*b, err
}

// tomlBool is the boolean the TOML document src sets at the key path
// want, nil when it sets none there.
func tomlBool(src string, want []string) (*bool, error) {
	var doc map[string]any
	if _, err := toml.Decode(src, &doc); err != nil {
		return nil, err // "toml: line 2 (last key ...): ..."
	}
	var v any = doc
	for _, k := range want {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil
		}
		if v, ok = m[k]; !ok {
			return nil, nil
		}
	}
	if b, ok := v.(bool); ok {
		return &b, nil
	}
	return nil, nil
}
