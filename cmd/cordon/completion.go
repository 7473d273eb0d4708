package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

var completionCommand = &command{
	name: "completion", summary: "print a shell completion script (bash, zsh or fish)",
	usage: "bash|zsh|fish", minArgs: 1, maxArgs: 1, missing: "name a shell: bash, zsh or fish",
	help: `Prints a script that completes cordon's commands and flags in your shell.

Examples:
  source <(cordon completion bash)                         # this shell; add it to ~/.bashrc to keep it
  cordon completion zsh > "${fpath[1]}/_cordon"            # then start a new zsh
  cordon completion fish > ~/.config/fish/completions/cordon.fish

Exit status: 0, 2 bad usage (a shell cordon does not know).
`,
	setup: func(fs *flag.FlagSet) action {
		return func(_ context.Context, e *env, args []string) int {
			words := completionWords(e.root)
			switch args[0] {
			case "bash":
				bashCompletion(e.stdout, words)
			case "zsh":
				fmt.Fprint(e.stdout, "#compdef cordon\nautoload -U +X bashcompinit && bashcompinit\n")
				bashCompletion(e.stdout, words)
			case "fish":
				fishCompletion(e.stdout, words)
			default:
				return usageError(e, "unknown shell %q%s: want bash, zsh or fish", args[0], didYouMean(args[0], []string{"bash", "zsh", "fish"}, ""))
			}
			return exitOK
		}
	},
}

// completionWords maps each command path ("", "audit", "audit verify")
// to what may follow it: its subcommands, or its flags as --NAME.
func completionWords(root *command) map[string][]string {
	words := map[string][]string{}
	var walk func(c *command)
	walk = func(c *command) {
		if c.subs != nil {
			for _, s := range c.subs {
				words[c.name] = append(words[c.name], lastWord(s.name))
				walk(s)
			}
			if c == root {
				words[""] = append(words[""], "help", "--help", "--version")
			}
			return
		}
		fs := newFlagSet(c)
		c.setup(fs)
		for _, n := range flagNames(fs) {
			words[c.name] = append(words[c.name], "--"+n)
		}
		words[c.name] = append(words[c.name], "--help")
		sort.Strings(words[c.name])
	}
	walk(root)
	return words
}

// sortedKeys are m's keys in order, for a script that is the same every
// time.
func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// bashCompletion completes the longest command path the words typed so
// far name, then offers what may follow it; after "--" in run, files and
// commands.
func bashCompletion(w io.Writer, words map[string][]string) {
	fmt.Fprint(w, `# bash completion for cordon (cordon completion bash)
_cordon() {
  local cur=${COMP_WORDS[COMP_CWORD]} path="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    [[ $w == -- ]] && { COMPREPLY=($(compgen -c -- "$cur")); return; }
    case "${path:+$path }$w" in
`)
	for _, k := range sortedKeys(words) {
		if k != "" {
			fmt.Fprintf(w, "    %q) path=%q ;;\n", k, k)
		}
	}
	fmt.Fprint(w, `    esac
  done
  local opts
  case "$path" in
`)
	for _, k := range sortedKeys(words) {
		fmt.Fprintf(w, "    %q) opts=%q ;;\n", k, strings.Join(words[k], " "))
	}
	fmt.Fprint(w, `  esac
  if [[ $cur == -* || -n $opts ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  fi
  [[ ${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _cordon cordon
`)
}

// fishCompletion offers each command's subcommands or flags once the
// words before it name that command.
func fishCompletion(w io.Writer, words map[string][]string) {
	fmt.Fprint(w, "# fish completion for cordon (cordon completion fish)\n")
	fmt.Fprint(w, `# __cordon_at PATH: the words typed so far name the command PATH.
function __cordon_at
    set -l words (commandline -opc)
    set -e words[1]
    set -l path
    for w in $words
        string match -q -- '-*' $w; and break
        set -l next (string join ' ' $path $w)
        contains -- "$next" $__cordon_paths; or break
        set path $path $w
    end
    set -l s (string join ' ' $path)
    test "$s" = "$argv[1]"
end
`)
	var paths []string
	for _, k := range sortedKeys(words) {
		if k != "" {
			paths = append(paths, fmt.Sprintf("%q", k))
		}
	}
	fmt.Fprintf(w, "set -g __cordon_paths %s\n", strings.Join(paths, " "))
	for _, k := range sortedKeys(words) {
		var sub, long []string
		for _, x := range words[k] {
			if n, ok := strings.CutPrefix(x, "--"); ok {
				long = append(long, n)
			} else {
				sub = append(sub, x)
			}
		}
		cond := fmt.Sprintf("__cordon_at %q", k)
		if len(sub) > 0 {
			fmt.Fprintf(w, "complete -c cordon -f -n '%s' -a %q\n", cond, strings.Join(sub, " "))
		}
		for _, n := range long {
			fmt.Fprintf(w, "complete -c cordon -n '%s' -l %s\n", cond, n)
		}
	}
}
