package shellquote

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// Either form gives the shell the original text back, whatever quotes,
// dollars, backslashes, globs or newlines it holds.
func TestRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "a/b-c_d.e=f:g,h+i@j%k", "it's", `"a" $HOME`, "`x` \\ back", "*", "a b",
		"multi\nline 'q' \"dq\"", `'\''`, "--flag"} {
		for name, quote := range map[string]func(string) string{"Single": Single, "Word": Word} {
			out, err := exec.Command("/bin/sh", "-c", "printf %s "+quote(s)).Output()
			require.NoError(t, err)
			require.Equal(t, s, string(out), "%s(%q) = %s", name, s, quote(s))
		}
	}
}

func TestWordLeavesSafeWordsBare(t *testing.T) {
	require.Equal(t, "--workspace", Word("--workspace"))
	require.Equal(t, "/usr/bin/bwrap", Word("/usr/bin/bwrap"))
	require.Equal(t, "''", Word(""))
	require.Equal(t, "'a b'", Word("a b"))
}
