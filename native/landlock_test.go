package native

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanLandlock: the domain grants reads beneath the sandbox's root,
// writes beneath the writable roots only (not beneath read-only roots,
// masks or pins), the device nodes, and back on inherited files the
// access their open mode gave; rights and scopes follow the ABI.
func TestPlanLandlock(t *testing.T) {
	s := &Spec{Mounts: []Mount{
		{Path: "/w", What: "bind"},
		{Path: "/w/.git/hooks", What: "read-only bind", Readonly: true},
		{Path: "/w/deny", What: "mask", Readonly: true, Src: "/m"},
		{Path: "/home/u", What: "pin"},
		{Path: "/ro", What: "bind", Readonly: true},
		{Path: "/t", What: "bind"},
	}}
	inh := []InheritedFD{{FD: 0, Read: true, Device: true}, {FD: 1, Write: true}, {FD: 2}}

	p, ok := PlanLandlock(s, 7, inh)
	require.True(t, ok)
	require.Equal(t, uint64(llScopeAbstractUnix|llScopeSignal), p.Scoped)
	require.Equal(t, uint64(1<<16-1), p.HandledFS)
	want := []LandlockRule{
		{Path: "/", Access: llRead},
		{Path: "/w", Access: llWrite},
		{Path: "/t", Access: llWrite},
		{Path: "/dev", Access: llFileWrite | llIoctlDev},
		{Path: "/dev/shm", Access: llWrite},
		{Path: "/proc", Access: llFileWrite},
		{FD: 0, Access: llReadFile | llIoctlDev},
		{FD: 1, Access: llFileWrite},
	}
	require.Equal(t, want, p.Rules)
	for _, r := range p.Rules {
		require.Zero(t, r.Access&(llMakeChar|llMakeBlock), "no rule lets the sandbox make device nodes: %+v", r)
	}

	// A writable root: the root rule carries the writes, and the mounts
	// are the only wall between it and the read-only roots.
	p, _ = PlanLandlock(&Spec{RootWritable: true}, 7, nil)
	require.Equal(t, LandlockRule{Path: "/", Access: llRead | llWrite}, p.Rules[0])

	// Older ABIs: rights they lack are neither handled nor granted.
	p, ok = PlanLandlock(s, 3, inh)
	require.True(t, ok)
	require.Zero(t, p.Scoped)
	require.Zero(t, p.HandledFS&llIoctlDev)
	for _, r := range p.Rules {
		require.Zero(t, r.Access&^p.HandledFS, "rule %+v grants a right ABI 3 lacks", r)
	}
	p, ok = PlanLandlock(s, 2, inh)
	require.True(t, ok)
	require.Zero(t, p.HandledFS&llTruncate)

	// ABI 1 (no REFER) and no Landlock: one wall.
	for _, abi := range []int{0, 1} {
		_, ok := PlanLandlock(s, abi, inh)
		require.False(t, ok, "ABI %d", abi)
		require.Contains(t, LandlockStatus(abi), "one wall")
	}
	require.Contains(t, LandlockStatus(6), "ABI 6 in force")
}

// TestWeakened: the mutation check names several steps at once.
func TestWeakened(t *testing.T) {
	s := &Spec{Weaken: "readonly-root,landlock"}
	require.True(t, s.weakened("landlock"))
	require.True(t, s.weakened("readonly-root"))
	require.False(t, s.weakened("land"))
	require.False(t, (&Spec{}).weakened("landlock"))
}
