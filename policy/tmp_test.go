package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGatedTmp: /tmp is gated under a backend that cannot mount exactly
// when the model reads it and does not write it, and no root names it.
func TestGatedTmp(t *testing.T) {
	tests := []struct {
		name string
		p    FsSandboxPolicy
		want bool
	}{
		{"restrictWrites", FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{"/w"}}, true},
		{"a root below /tmp", FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{"/tmp/ws"}}, true},
		{"open mode", FsSandboxPolicy{}, false},
		{"writable /tmp", FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{"/tmp"}}, false},
		{"read-only /tmp", FsSandboxPolicy{RestrictWrites: true, ReadonlyRoots: []string{"/tmp"}}, false},
		{"denied /tmp", FsSandboxPolicy{RestrictWrites: true, DeniedRoots: []string{"/tmp"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Canonicalize(tt.p)
			require.NoError(t, err)
			require.Equal(t, tt.want, c.GatedTmp())
		})
	}
}
