package launcher

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBackend(t *testing.T) {
	for _, name := range []string{BackendAuto, BackendBwrap, BackendSeatbelt, BackendNone} {
		b, err := ParseBackend(name)
		require.NoError(t, err)
		require.Equal(t, name, string(b))
	}
	for _, bad := range []string{"", "jail", "BWRAP", " bwrap"} {
		_, err := ParseBackend(bad)
		require.EqualError(t, err, `backend "`+bad+`": want auto, bwrap, native, landlock, seatbelt or none`)
	}
}

func TestBackendFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	b := Backend(BackendAuto)
	fs.Var(&b, "backend", "")
	require.NoError(t, fs.Parse([]string{"--backend", "none"}))
	require.Equal(t, Backend(BackendNone), b)
	require.EqualError(t, fs.Parse([]string{"--backend", "jail"}),
		`invalid value "jail" for flag -backend: want auto, bwrap, native, landlock, seatbelt or none`)
	require.Equal(t, Backend(BackendNone), b, "a refused value leaves the flag as it was")
}
