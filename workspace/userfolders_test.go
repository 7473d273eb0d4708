package workspace

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUserFolders(t *testing.T) {
	const d = "/private/var/folders/zz/abc123_n4x0000gn"
	private := map[string]bool{d + "/T": true, d + "/C": true}
	isPrivate := func(p string) bool { return private[p] }

	w, ro := userFolders(d+"/T/", isPrivate)
	require.Equal(t, []string{d + "/T", d + "/C"}, w)
	require.Equal(t, []string{d + "/T/xcrun_db"}, ro)

	// Not the temp folder's shape, or not the user's own: nothing, since
	// TMPDIR may point anywhere.
	for _, t0 := range []string{"/Users/me", "/private/tmp", d, d + "/0", d + "/T/sub", "/var/folders/zz/abc/T", "/private/var/folders/zz/T"} {
		w, ro := userFolders(t0, func(string) bool { return true })
		require.Nil(t, w, t0)
		require.Nil(t, ro, t0)
	}
	w, _ = userFolders(d+"/T", func(string) bool { return false })
	require.Nil(t, w, "a T owned by someone else")

	// C missing or foreign: T alone.
	delete(private, d+"/C")
	w, _ = userFolders(d+"/T", isPrivate)
	require.Equal(t, []string{d + "/T"}, w)
}
