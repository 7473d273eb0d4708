package launcher

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// A command the agent runs through the helper cannot read the agent's
// environment from /proc (where its key stays however the agent drops
// it), and still reads the agent's command line and its own environment.
// As root, without capabilities, as a sandbox's root is (root's
// capabilities outside every sandbox let it read the environment anyway).
func TestAgentShellApartFromAgent(t *testing.T) {
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); errno != 0 {
		testenv.NotApplicable(t, "needs Landlock: "+errno.Error())
	}
	sh := []string{"/bin/sh"}
	if os.Getuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		testenv.Need(t, "setpriv (util-linux), to run as root without capabilities", err)
		sh = []string{setpriv, "--bounding-set=-all", "--inh-caps=-all", "/bin/sh"}
	}
	// The agent: a shell with the key in its environment, which runs the
	// helper as its shell prefix (and outlives it: "; true").
	const command = `tr '\0' '\n' 2>/dev/null </proc/$PPID/environ | grep -c CORDON_T_KEY; tr '\0' ' ' </proc/$PPID/cmdline | grep -c agent-marker; tr '\0' '\n' </proc/$$/environ | grep -c CORDON_T_KEEP`
	cmd := exec.Command(sh[0], append(sh[1:], "-c", `"$0" `+agentShellArg+`=CORDON_T_KEY "$1"; true`, os.Args[0], command, "agent-marker")...)
	cmd.Env = append(os.Environ(), "CORDON_T_KEY=secret", "CORDON_T_KEEP=kept")
	out, _ := cmd.CombinedOutput()
	if got := string(out); got != "0\n1\n1\n" {
		t.Errorf("output %q, want the agent's environment unread (0), its command line (1) and the command's own environment (1) read", got)
	}
}
