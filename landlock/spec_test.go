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

// TestSpecDecodeRefusesDamage: a spec cut anywhere, with bytes after its
// end, with another magic, or with a count larger than what follows, is
// refused, never read as a shorter plan.
func TestSpecDecodeRefusesDamage(t *testing.T) {
	s := &Spec{Path: "/bin/true", Argv: []string{"true"}, Closed: []int{3},
		Plan: &Plan{ABI: 7, Rules: []Rule{{Path: "/w", Access: ReadFile}}, Frozen: []string{"/w"}}}
	b, err := s.Encode()
	require.NoError(t, err)
	for n := range len(b) {
		_, err := DecodeSpec(b[:n])
		require.Error(t, err, "cut at %d of %d", n, len(b))
	}
	_, err = DecodeSpec(append(append([]byte(nil), b...), 0))
	require.ErrorContains(t, err, "after the end")
	other := append([]byte(nil), b...)
	other[0] ^= 1
	_, err = DecodeSpec(other)
	require.Error(t, err)
	// The argv's count (1) made huge: refused before anything is allocated.
	w := &specWriter{b: []byte(specMagic)}
	w.flag(false)
	w.num(0)
	w.str("")
	w.num(0)
	w.str("/bin/true")
	w.num(1 << 40)
	_, err = DecodeSpec(w.b)
	require.ErrorContains(t, err, "over")
}
