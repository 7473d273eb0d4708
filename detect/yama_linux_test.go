package detect

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// Yama's scope 2 without CAP_SYS_PTRACE, and scope 3 always, keep the
// launcher from reading the sandbox's metadata calls: detection says so.
func TestYamaNote(t *testing.T) {
	require.Empty(t, yamaNote(-1, false))
	require.Empty(t, yamaNote(1, false))
	require.Empty(t, yamaNote(2, true))
	require.Contains(t, yamaNote(2, false), "ptrace_scope is 2")
	require.Contains(t, yamaNote(3, true), "fails with EPERM")
}

// On the host, a landlock sentinel is not believed: the state directory
// lists, whatever the variable says.
func TestInsideLandlockNotOnHost(t *testing.T) {
	t.Setenv(state.EnvDir, t.TempDir())
	t.Setenv(EnvSandbox, "landlock")
	require.False(t, insideLandlock())
	_, ok := Nested()
	require.False(t, ok, "a variable set on the host must not switch the sandbox off")
}
