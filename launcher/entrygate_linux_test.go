package launcher

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// TestLandlockEntriesTmp: /tmp is a private creation directory of the
// gate where the model gates it (policy.Canonical.GatedTmp) and Landlock
// reads what is made there after the launch; a denied root below /tmp,
// which splits it into a rule per entry, or a policy that names /tmp,
// leaves it to the plan.
func TestLandlockEntriesTmp(t *testing.T) {
	tmp, err := filepath.EvalSymlinks("/tmp")
	require.NoError(t, err)
	ws := t.TempDir()
	below, err := os.MkdirTemp("/tmp", "cordon-entries-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(below) })
	// An old state directory of this user in /tmp is denied at every
	// launch (state.Places), and splits /tmp as any denied root there.
	_, err = os.Stat(filepath.Join("/tmp", "cordon-"+strconv.Itoa(os.Getuid())))
	unsplit := err != nil
	tests := []struct {
		name string
		p    policy.FsSandboxPolicy
		want bool
	}{
		{"a workspace", policy.FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{ws}}, unsplit},
		{"a denied root below /tmp", policy.FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{ws}, DeniedRoots: []string{below}}, false},
		{"/tmp writable", policy.FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{ws, "/tmp"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			canon, err := canonicalize(tt.p, nil)
			require.NoError(t, err)
			plan, err := landlockPlan(canon)
			require.NoError(t, err)
			e := newLandlockEntries(plan, canon)
			require.Equal(t, tt.want, e.Private(tmp))
			require.False(t, e.Private(filepath.Join(tmp, "x")), "only /tmp itself: what the sandbox makes below is the gate's to know")
			require.False(t, e.Private(""))
		})
	}
}
