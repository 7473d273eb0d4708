package detect

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/seatbelt"
)

// TestSeatbeltProbeCompilesTheRealProfile: the probe applies the profile a
// launch would, not a token (allow default), with every parameter it
// names. Reverting to (version 1)(allow default) fails here.
func TestSeatbeltProbeCompilesTheRealProfile(t *testing.T) {
	args, err := seatbeltProbeArgs()
	require.NoError(t, err)
	prof, err := seatbelt.ProbeProfile()
	require.NoError(t, err)

	require.Equal(t, "-p", args[0])
	require.Equal(t, prof.SBPL, args[1])
	require.Equal(t, "/usr/bin/true", args[len(args)-1])
	for _, construct := range []string{
		"(ioctl-command 2147578994)", "(deny network*)", "(target same-sandbox)",
		"(allow file-read-metadata", "(deny file-write-unlink", "(require-not (vnode-type DIRECTORY))",
		"(string-append \"/System/Volumes/Data\" (param", "(deny lsopen)", "(deny user-preference-write)",
	} {
		require.Contains(t, args[1], construct)
	}
	var ds []string
	for i := 2; i < len(args)-1; i += 2 {
		require.Equal(t, "-D", args[i])
		ds = append(ds, args[i+1])
	}
	require.Len(t, ds, len(prof.Params))
	for i, p := range prof.Params {
		require.Equal(t, p.Name+"="+p.Value, ds[i])
		require.Contains(t, args[1], `(param "`+p.Name+`")`)
	}
	require.NotEqual(t, "(version 1)(allow default)", strings.TrimSpace(args[1]))

	// The cache key names the probe, so a changed profile probes again.
	id := seatbeltProbeID()
	require.True(t, strings.HasPrefix(id, "probe-"), id)
	require.Equal(t, id, seatbeltProbeID())
}
