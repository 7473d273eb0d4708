package native

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpecEncoding: a spec comes back from Encode and Decode as it went
// in, whatever bytes its paths hold; a NUL in a path, a cut or a bad
// field is an error, not a different mount list.
func TestSpecEncoding(t *testing.T) {
	s := &Spec{
		Path: "/bin/sh", Argv: []string{"sh", "-c", "echo\nhi"}, Chdir: "/w",
		Seccomp: []byte{6, 0, 0, 0, 0, 0, 0xff, 0x7f}, Ctty: true, CttyFd: 1,
		Mounts: []Mount{
			{Path: "/a", Readonly: true, What: "bind", Dev: 2049, Ino: 12},
			{Path: "/a/new\nline\tand tab", Src: "/tmp/mask dir/é", What: "mask"},
			{Path: "/a/{\"json\"}", What: "pin", Dev: 1<<64 - 1, Ino: 1},
		},
	}
	b, err := s.Encode()
	require.NoError(t, err)
	got, err := Decode(b)
	require.NoError(t, err)
	require.Equal(t, s, got)

	empty, err := (&Spec{Path: "/bin/true"}).Encode()
	require.NoError(t, err)
	got, err = Decode(empty)
	require.NoError(t, err)
	require.Empty(t, got.Mounts)

	_, err = (&Spec{Mounts: []Mount{{Path: "/a\x00b"}}}).Encode()
	require.ErrorContains(t, err, "NUL")
	_, err = Decode(b[:len(b)-1])
	require.ErrorContains(t, err, "cut short")
	_, err = Decode([]byte(`{}` + "\n/a\x00\x00bind\x00x\x000\x000\x00"))
	require.ErrorContains(t, err, "bad fields")
	_, err = Decode([]byte(`{}`))
	require.Error(t, err)
}

// BenchmarkDecode3000 decodes the spec of 3,000 mounts, as the init does
// first thing on a fresh heap:
//
//	go test ./native -run '^$' -bench Decode -benchmem
func BenchmarkDecode3000(b *testing.B) {
	s := &Spec{Path: "/bin/true", Argv: []string{"true"}}
	for i := range 3000 {
		s.Mounts = append(s.Mounts, Mount{Path: fmt.Sprintf("/home/u/src/p%02d/r%04d/.git", i/50, i), What: "ro-bind", Readonly: true, Dev: 2049, Ino: uint64(1000 + i)})
	}
	data, err := s.Encode()
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode3000 encodes the spec of 3,000 mounts, as the launcher
// does for each launch.
func BenchmarkEncode3000(b *testing.B) {
	s := &Spec{Path: "/bin/true", Argv: []string{"true"}, Seccomp: make([]byte, 4096)}
	for i := range 3000 {
		s.Mounts = append(s.Mounts, Mount{Path: fmt.Sprintf("/home/u/src/p%02d/r%04d/.git", i/50, i), What: "ro-bind", Readonly: true, Dev: 2049, Ino: uint64(1000 + i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

// allBytes is a string holding every byte value 1-255 once: most of them
// are not UTF-8 on their own.
func allBytes() string {
	b := make([]byte, 255)
	for i := range b {
		b[i] = byte(i + 1)
	}
	return string(b)
}

// TestSpecBytes: the command, its arguments and the working directory
// come back byte for byte, every value 1-255 among them: a JSON string
// would have turned each byte that is not UTF-8 into U+FFFD.
func TestSpecBytes(t *testing.T) {
	all := allBytes()
	s := &Spec{Path: "./b\xff/run", Argv: []string{"x\xff", all, ""}, Chdir: "/w/" + string([]byte(all)[:46]) + string([]byte(all)[47:])}
	b, err := s.Encode()
	require.NoError(t, err)
	got, err := Decode(b)
	require.NoError(t, err)
	require.Equal(t, s.Path, got.Path)
	require.Equal(t, s.Argv, got.Argv)
	require.Equal(t, s.Chdir, got.Chdir)
	require.Nil(t, (&Spec{}).Argv)
}
