// Package shellquote writes words for a POSIX shell to read back
// unchanged: the --sandbox-bash rewrite of Claude Code's Bash calls, and
// the command lines 'cordon profile' prints to paste.
package shellquote

import "strings"

// Single wraps s in single quotes. A quote inside is written as quote,
// backslash, quote, quote: close, an escaped quote, reopen; it is the one
// character single quotes cannot hold.
func Single(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Word leaves a word of only characters no shell treats specially bare,
// and single-quotes any other.
func Word(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return Single(s)
}
