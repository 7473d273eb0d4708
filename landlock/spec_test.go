package landlock

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpecBytes: every path the init acts on comes back byte for byte,
// every value 1-255 among them (a JSON string would have turned each byte
// that is not UTF-8 into U+FFFD), and the rest of the spec as it went in.
func TestSpecBytes(t *testing.T) {
	all := make([]byte, 255)
	for i := range all {
		all[i] = byte(i + 1)
	}
	dir := "/w/" + string(all[:46]) + string(all[47:]) // no '/' (47)
	s := &Spec{
		Path: "./b\xff/run", Argv: []string{"x\xff", string(all), ""},
		Network: true, Seccomp: []byte{1, 2, 0xff}, Gate: 5, Files: 2, Closed: []int{4}, Weaken: "seccomp",
		Plan: &Plan{
			ABI: 7, HandledFS: 3, Scoped: 1,
			Rules:      []Rule{{Path: dir, Access: ReadFile, Dir: true, Dev: 1, Ino: 2}, {Path: "/usr", Access: Execute}},
			Frozen:     []string{dir},
			Unlistable: []string{"/x\xfe"},
			Stricter:   []Difference{{Path: "/s", Why: "why"}},
		},
	}
	b, err := s.Encode()
	require.NoError(t, err)
	got, err := DecodeSpec(b)
	require.NoError(t, err)
	require.Equal(t, s, got)

	none, err := (&Spec{Path: "/bin/true", Probe: "/p"}).Encode()
	require.NoError(t, err)
	got, err = DecodeSpec(none)
	require.NoError(t, err)
	require.Nil(t, got.Plan)
	require.Equal(t, "/p", got.Probe)
}
