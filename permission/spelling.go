package permission

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cordon-sandbox/cordon/internal/blank"
)

// spelling is how an agent turns the string a file tool is given into the
// path it opens. The decider decides on that path, or refuses a string
// the agent would read otherwise than cordon can be sure of: a path tool
// outside the sandbox opens what the agent makes of the string, not what
// the request spells.
type spelling int

const (
	// spellExact: the path as given (cordon's own runner); a "~" is not
	// expanded, so the scope refuses it.
	spellExact spelling = iota
	// spellClaudeCode: Claude Code's path expansion (docs/claude-code.md,
	// "How Claude Code reads a path"): the string is trimmed as
	// JavaScript's String.prototype.trim does, "~" and a leading "~/" are
	// HOME, and a relative path is taken from the session's cwd. cordon
	// refuses a path that trimming would change, so no decision rests on
	// a copy of JavaScript's white-space table; it expands "~" and "~/"
	// as Claude Code does, and leaves "~user" to the scope, which refuses
	// it (Claude Code would open a file named "~user" in the cwd).
	spellClaudeCode
	// spellAbsolute: an agent whose file tools take absolute paths only
	// (GitHub Copilot CLI, Cursor's hooks). Anything else, a "~" included,
	// is refused, and so is white space at either end, since cordon
	// cannot be sure the agent keeps it.
	spellAbsolute
	// spellGemini: Gemini CLI's file tools. The path is not trimmed (white
	// space at either end is refused all the same), "~" is not expanded
	// (the scope refuses it), a relative path is taken from the project
	// directory (the payload's cwd), a leading "@" is stripped when the
	// file it names does not exist and the path is URI-decoded before it
	// is resolved: both are refused, as cordon would otherwise decide on
	// another file than Gemini opens.
	spellGemini
	// spellRelaxed: a path from a patch (Codex's apply_patch): relative to
	// the cwd, "~" not expanded (the scope refuses it), white space at
	// either end refused.
	spellRelaxed
)

// open returns the path the agent opens for p, the key's value, or why
// cordon refuses to decide on it. home is the agent's HOME.
func (sp spelling) open(name, key, p, home string) (string, error) {
	if sp == spellExact || p == "" {
		return p, nil
	}
	if err := unreadable(name, key, p); err != nil {
		return "", err
	}
	first, _ := utf8.DecodeRuneInString(p)
	last, _ := utf8.DecodeLastRuneInString(p)
	for _, r := range []rune{first, last} {
		if !edgeBlank(r) {
			continue
		}
		if sp == spellClaudeCode {
			return "", fmt.Errorf("%s: %q %q begins or ends with %U, which Claude Code trims before it opens the path (it would open %q): give the path without it",
				name, key, p, r, blank.TrimJS(p))
		}
		return "", fmt.Errorf("%s: %q %q begins or ends with %U: a path with white space at either end is refused, as cordon cannot be sure the agent keeps it: give the path without it",
			name, key, p, r)
	}
	switch sp {
	case spellAbsolute:
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("%s: %q %q is not an absolute path, which this agent's tool requires: give the absolute path", name, key, p)
		}
		return p, nil
	case spellGemini:
		if strings.HasPrefix(p, "@") {
			return "", fmt.Errorf("%s: %q %q begins with \"@\", which Gemini CLI strips when no file has that name: give the path without it", name, key, p)
		}
		if strings.Contains(p, "%") {
			return "", fmt.Errorf("%s: %q %q has \"%%\", and Gemini CLI URI-decodes a path before it opens it (%%2e%%2e is \"..\"): give the path without it", name, key, p)
		}
		return p, nil
	case spellRelaxed:
		return p, nil
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if !filepath.IsAbs(home) {
			return "", fmt.Errorf("%s: %q %q starts with \"~\", which Claude Code expands to HOME, and HOME (%q) is not an absolute path here: give the path without \"~\"",
				name, key, p, home)
		}
		return home + p[1:], nil
	}
	return p, nil
}

// unreadable refuses a path field with a character that changes how the
// agent, or the person asked to approve the call, reads it: control
// characters anywhere (NUL makes Claude Code fail the call; a carriage
// return or an escape sequence rewrites the line the prompt shows), and
// the marks that reorder text on screen.
func unreadable(name, key, p string) error {
	for i, r := range p {
		if unicode.IsControl(r) || bidiControl(r) {
			return fmt.Errorf("%s: %q %q has %U at byte %d: a path with control or text-direction characters is refused, as the prompt would not show it as it is",
				name, key, p, r, i)
		}
	}
	return nil
}

// edgeBlank reports a character that may not begin or end a path: every
// character JavaScript's trim removes (white space, line terminators,
// U+FEFF) and, so that no engine's table can differ from cordon's, every
// other Unicode white space, format or control character.
func edgeBlank(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Cf, unicode.Cc) || r == utf8.RuneError
}

// bidiControl: the embeddings, overrides, isolates and marks that change
// the order in which text is displayed.
func bidiControl(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
