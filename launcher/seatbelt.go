package launcher

import (
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/seatbelt"
)

// sandboxExec is Seatbelt's launcher, never taken from PATH.
const sandboxExec = seatbelt.SandboxExec

func renderSeatbelt(out *Rendered, canon *policy.Canonical, network bool, cmd []string) (*Rendered, error) {
	prof, err := seatbelt.Render(canon, seatbelt.Options{Network: network})
	if err != nil {
		return nil, err
	}
	out.SBPL = prof.SBPL
	out.Params = prof.ParamMap()
	out.Argv = prof.Argv("PROFILE_FILE", cmd)
	return out, nil
}
