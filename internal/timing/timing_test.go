package timing

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMark: off, a mark prints nothing; on, one line a mark, naming the
// process, its pid and the phase, the second with the time since the
// first.
func TestMark(t *testing.T) {
	var b bytes.Buffer
	saved, savedOn := out, on
	t.Cleanup(func() { out, on = saved, savedOn })
	out, on = &b, false
	Mark("run", "detection")
	require.Empty(t, b.String())

	on = true
	Mark("run", "detection")
	Mark("init", "spec")
	lines := bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	pid := fmt.Sprint(os.Getpid())
	require.Regexp(t, regexp.MustCompile(`^cordon timing: run `+pid+` detection +\d\d:\d\d:\d\d\.\d{6} \+\d+\.\d{3} ms$`), string(lines[0]))
	require.Regexp(t, regexp.MustCompile(`^cordon timing: init `+pid+` spec +\d\d:\d\d:\d\d\.\d{6} \+\d+\.\d{3} ms$`), string(lines[1]))
}
