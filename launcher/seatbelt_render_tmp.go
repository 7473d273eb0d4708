package launcher

import (
	"errors"

	"github.com/cordon-sandbox/cordon/policy"
)

func renderSeatbelt(out *Rendered, canon *policy.Canonical, network bool, cmd []string) (*Rendered, error) {
	return nil, errors.New("seatbelt: renderer not wired yet")
}
