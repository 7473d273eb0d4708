package workspace

import (
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// configRefs lists the paths a git config file makes git read or run: the
// files of include.path and includeIf.*.path (relative to the config
// file's directory dir), core.hooksPath (relative to the work tree top),
// and commands whose program is a path (relative to top). A path-less
// program is looked up in PATH, outside what a preset can see; a value
// starting with ~ is under HOME, which has protections of its own.
func configRefs(file, dir, top string) []string {
	b, err := readFile(file)
	if err != nil || testhook.NoConfigRefs {
		return nil
	}
	if top == "" {
		top = dir
	}
	var out []string
	for _, e := range configEntries(string(b)) {
		paths, inConfigDir := configPaths(e.key, e.value)
		base := top
		if inConfigDir {
			base = dir
		}
		for _, v := range paths {
			if v == "" || strings.HasPrefix(v, "~") {
				continue
			}
			if !filepath.IsAbs(v) {
				v = filepath.Join(base, v)
			}
			if r, err := policy.Resolve(filepath.Clean(v)); err == nil {
				out = append(out, r)
			}
		}
	}
	return out
}

// configEntry is one "key = value" of a git config file: the key with its
// section and subsection ("section.sub.key", all lower case but the
// subsection), the value unquoted.
type configEntry struct{ key, value string }

// configEntries reads the entries of a git config file's text, as far as
// configRefs needs: a section header, alone or before an entry on its
// line, and "key = value" lines; anything else is skipped.
func configEntries(text string) []configEntry {
	var out []configEntry
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			s, rest, ok := sectionHeader(line)
			if !ok {
				continue
			}
			section, line = s, rest
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out = append(out, configEntry{key: section + "." + strings.ToLower(strings.TrimSpace(k)), value: configValue(v)})
	}
	return out
}

// sectionHeader reads a line starting with "[": the section it opens
// ("name" or "name.subsection") and what follows the header on the line.
func sectionHeader(line string) (section, rest string, ok bool) {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return "", "", false
	}
	name, sub, _ := strings.Cut(line[1:end], " ")
	section = strings.ToLower(name)
	if sub != "" {
		section += "." + strings.Trim(strings.TrimSpace(sub), `"`)
	}
	return section, strings.TrimSpace(line[end+1:]), true
}

// configPaths returns the paths the config entry key = v makes git read or
// run, and whether they are relative to the config file's directory (an
// include) rather than to the work tree's top (hooks, commands).
func configPaths(key, v string) (paths []string, inConfigDir bool) {
	last := key[strings.LastIndexByte(key, '.')+1:]
	switch {
	case strings.HasPrefix(key, "include.") || strings.HasPrefix(key, "includeif."):
		if last == "path" {
			return []string{v}, true
		}
	case key == "core.hookspath":
		if filepath.Base(v) == "_" { // husky's stubs run the scripts beside them
			return []string{v, filepath.Dir(v)}, false
		}
		return []string{v}, false
	case commandKeys[key] || commandKeys[strings.SplitN(key, ".", 2)[0]+".*."+last] ||
		strings.HasPrefix(key, "alias.") || strings.HasPrefix(key, "pager."):
		prog := strings.TrimPrefix(v, "!")
		if f := strings.Fields(prog); len(f) > 0 && strings.Contains(f[0], "/") {
			return []string{f[0]}, false
		}
	}
	return nil, false
}

// commandKeys are the config keys whose value git runs as a command
// ("SECTION.*.KEY" for any subsection).
var commandKeys = map[string]bool{
	"core.fsmonitor": true, "core.sshcommand": true, "core.pager": true,
	"core.editor": true, "core.askpass": true, "sequence.editor": true,
	"credential.helper": true, "gpg.program": true, "gpg.*.program": true,
	"diff.*.command": true, "diff.*.textconv": true, "diff.external": true,
	"filter.*.clean": true, "filter.*.smudge": true, "filter.*.process": true,
	"merge.*.driver": true, "credential.*.helper": true,
}

// configValue unquotes a config value and drops a trailing comment.
func configValue(v string) string {
	v = strings.TrimSpace(v)
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
