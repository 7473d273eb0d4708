package setup

import (
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/shellquote"
)

// Hook is the command line an agent runs: '<Cordon> hook AGENT [flags]'.
type Hook struct {
	// Cordon is the absolute path of the cordon binary the agent runs.
	Cordon string
	// SandboxBash and AllowSandboxed are 'cordon hook's flags of those
	// names; Audit, when set, is --audit's file.
	SandboxBash, AllowSandboxed bool
	Audit                       string
}

// Command is the hook's command line for agent, each word quoted for the
// shell the agent runs it with.
func (h Hook) Command(agent string) string {
	words := []string{shellquote.Word(h.Cordon), "hook", agent}
	if h.SandboxBash {
		words = append(words, "--sandbox-bash")
	}
	if h.AllowSandboxed {
		words = append(words, "--allow-sandboxed")
	}
	if h.Audit != "" {
		words = append(words, "--audit", shellquote.Word(h.Audit))
	}
	return strings.Join(words, " ")
}

// CordonHook reports whether command runs 'cordon hook': its first word
// is a program named cordon and its second "hook". binary is that first
// word as the shell reads it, agent the third ("" when absent).
func CordonHook(command string) (binary, agent string, ok bool) {
	words := shellWords(command, 3)
	if len(words) < 2 || filepath.Base(words[0]) != "cordon" || words[1] != "hook" {
		return "", "", false
	}
	if len(words) > 2 {
		agent = words[2]
	}
	return words[0], agent, true
}

// shellWords splits the first n words of a POSIX shell command line, with
// single and double quotes and backslashes; it stops at an unquoted
// operator (; & | < > ( ) or a newline). Expansions stay as written: the
// words cordon looks at are literal in the lines it writes.
func shellWords(s string, n int) []string {
	var words []string
	var w strings.Builder
	in := false // inside a word
	for i := 0; i < len(s) && len(words) < n; i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		case strings.IndexByte(";&|<>()\n", c) >= 0:
			i = len(s)
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil
			}
			w.WriteString(s[i+1 : i+1+j])
			i += 1 + j
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil
			}
		case c == '\\' && i+1 < len(s):
			in = true
			i++
			w.WriteByte(s[i])
		default:
			in = true
			w.WriteByte(c)
		}
	}
	if in && len(words) < n {
		words = append(words, w.String())
	}
	return words
}

// Exact parses command when it is exactly a line 'cordon init' writes for
// agent: an absolute cordon, "hook AGENT", known flags only, quoted as
// Hook.Command quotes them. Anything more (a "; exit 0", a redirection,
// another flag) is not a gate doctor can vouch for.
func Exact(command, agent string) (Hook, bool) {
	words := shellWords(command, 16)
	if len(words) < 3 || !filepath.IsAbs(words[0]) || filepath.Base(words[0]) != "cordon" || words[1] != "hook" || words[2] != agent {
		return Hook{}, false
	}
	h := Hook{Cordon: words[0]}
	for i := 3; i < len(words); i++ {
		switch words[i] {
		case "--sandbox-bash":
			h.SandboxBash = true
		case "--allow-sandboxed":
			h.AllowSandboxed = true
		case "--audit":
			if i+1 >= len(words) || words[i+1] == "" {
				return Hook{}, false
			}
			h.Audit = words[i+1]
			i++
		default:
			return Hook{}, false
		}
	}
	return h, h.Command(agent) == command
}
