package launcher

import (
	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// renderLandlock: INTERIM, until landlock.Render lands (helper A1):
// read everything, write the writable roots. Wider than the model; not
// for merging.
func renderLandlock(canon *policy.Canonical, abi int, network bool) (*landlock.Plan, error) {
	all := landlock.Execute | landlock.WriteFile | landlock.ReadFile | landlock.ReadDir | landlock.RemoveDir |
		landlock.RemoveFile | landlock.MakeChar | landlock.MakeDir | landlock.MakeReg | landlock.MakeSock |
		landlock.MakeFifo | landlock.MakeBlock | landlock.MakeSym | landlock.Refer
	if abi >= 3 {
		all |= landlock.Truncate
	}
	p := &landlock.Plan{ABI: abi, HandledFS: all}
	p.Rules = append(p.Rules, landlock.Rule{Path: "/", Access: landlock.Execute | landlock.ReadFile | landlock.ReadDir, Dir: true})
	p.Rules = append(p.Rules, landlock.Rule{Path: "/dev/null", Access: landlock.ReadFile | landlock.WriteFile})
	for _, r := range writableRoots(canon) {
		p.Rules = append(p.Rules, landlock.Rule{Path: r, Access: all &^ (landlock.MakeChar | landlock.MakeBlock), Dir: true})
	}
	return p, nil
}
