package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/landlock"
)

// TestMade: a step the model allows must succeed, in a directory the
// plan freezes too (the entry gate makes it there).
func TestMade(t *testing.T) {
	all := landlock.HandledFS(landlock.MinABI)
	// ws is frozen (read only, its own rule); ws/src, an entry that
	// existed at launch, is granted everything.
	pl := &landlock.Plan{ABI: landlock.MinABI, HandledFS: all, Rules: []landlock.Rule{
		{Path: "/fix/ws", Access: landlock.ReadRights, Dir: true},
		{Path: "/fix/ws/src", Access: landlock.ReadRights | landlock.WriteRights, Dir: true},
	}}
	done := Output{Stdout: "@@WORK@@\n"}
	for _, tc := range []struct {
		name  string
		pl    *landlock.Plan
		rel   string
		o     Output
		fails bool
	}{
		{"frozen, refused: the entry gate is broken", pl, "ws/file", Output{}, true},
		{"frozen, made by the entry gate", pl, "ws/file", done, false},
		{"granted, made", pl, "ws/src/file", done, false},
		{"granted, refused: the sandbox is broken", pl, "ws/src/file", Output{}, true},
		{"no plan, made", nil, "ws/file", done, false},
		{"no plan, refused", nil, "ws/file", Output{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &H{Dir: "/fix"}
			h.Made(tc.o, tc.pl, "WORK", tc.rel)
			require.Equal(t, tc.fails, len(h.failures) > 0, "%v", h.failures)
		})
	}
}
