package launcher

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/seatbelt"
)

// sandboxExec is Seatbelt's launcher, never taken from PATH.
const sandboxExec = seatbelt.SandboxExec

// ErrProfile is wrapped by Wait's error when sandbox-exec could not apply
// the profile and so never started the command. Its exit status (65 for a
// profile that does not compile) is then not the command's: cordon run
// reports it as its own error (exit 125).
var ErrProfile = errors.New("sandbox-exec could not apply the profile")

// exDataErr is sysexits' EX_DATAERR, sandbox-exec's status for a profile
// that does not compile.
const exDataErr = 65

func renderSeatbelt(out *Rendered, canon *policy.Canonical, network bool, np *netpolicy.Policy, cmd []string) (*Rendered, error) {
	opts := seatbelt.Options{Network: network}
	if np != nil {
		// A launch picks a free port; PORT stands for it.
		opts.ProxyPort = seatbeltProxyPortShown
		out.Network = &RenderedNet{AllowDomains: np.AllowText(), DenyDomains: np.DenyText(),
			Proxy: "http://cordon:CREDENTIAL@127.0.0.1:PORT", Enforcement: seatbeltNetEnforcement}
	}
	prof, err := seatbelt.Render(canon, opts)
	if err != nil {
		return nil, err
	}
	out.SBPL = prof.SBPL
	out.Params = prof.ParamMap()
	out.Argv = prof.Argv("PROFILE_FILE", cmd)
	return out, nil
}

// recheck is what sandbox-exec did with the launch's profile applied to
// /usr/bin/true instead of the command: its exit status and what it said.
type recheck struct {
	code   int
	stderr string
	err    error // it could not be run at all
}

// seatbeltFailure is the error for a sandbox process that exited with code
// while still being sandbox-exec, that is before it started the command
// (path). The recheck tells a profile that does not apply (ErrProfile,
// with sandbox-exec's own words) from a command sandbox-exec could not
// execute (an *exec.Error, as os/exec would give for it).
func seatbeltFailure(path string, code int, rc recheck) error {
	msg := firstLine(rc.stderr)
	switch {
	case rc.err != nil:
		return fmt.Errorf("%w: sandbox-exec exited with status %d before starting %s, and checking the profile again failed: %w", ErrProfile, code, path, rc.err)
	case rc.code == exDataErr:
		return fmt.Errorf("%w: the profile does not compile on this macOS (sandbox-exec exited with status %d before starting %s: %q); `cordon detect --fresh` re-checks this Mac, `cordon profile --backend seatbelt` shows the profile",
			ErrProfile, code, path, msg)
	case rc.code != 0:
		return fmt.Errorf("%w: sandbox-exec exited with status %d before starting %s (applying the profile to /usr/bin/true: status %d, %q)",
			ErrProfile, code, path, rc.code, msg)
	}
	return &exec.Error{Name: path, Err: fmt.Errorf("sandbox-exec applied the profile but could not start it (status %d; its message is above)", code)}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// seatbeltProxyPortShown is the port 'cordon profile' shows in the
// profile: a launch listens on a free port of its own.
const seatbeltProxyPortShown = 3128

// seatbeltNetEnforcement is how Seatbelt keeps a sandbox to its proxy.
const seatbeltNetEnforcement = "the profile denies every network operation (Unix sockets included) but outbound TCP to localhost:PORT, " +
	"where cordon's proxy listens for this launch only (a free port, chosen at launch) and refuses any client without the launch's random credential, " +
	"which only the sandbox's proxy variables carry; the proxy decides each request by the host name asked for and connects out from the host"
