package conformance

import (
	"fmt"
	"io"
	"net"
	"os"
)

// Attack runs the attack helper 'cordon __attack NAME ARGS...' inside a
// sandbox and returns its exit status. Each attack prints @@MARKER@@ on
// stdout when it got through, so a case can judge it by its output as
// well as by the host's state.
func Attack(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: cordon __attack NAME [ARG]...")
		return 2
	}
	f, ok := attacks[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "cordon __attack: unknown attack %q\n", args[0])
		return 2
	}
	return f(args[1:], stdout, stderr)
}

type attackFunc func(args []string, stdout, stderr io.Writer) int

var attacks = map[string]attackFunc{}

func mark(w io.Writer, m string) { fmt.Fprintf(w, "@@%s@@\n", m) }

func init() {
	attacks["rename"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 2 {
			return usage(errw, "rename OLD NEW")
		}
		if err := os.Rename(a[0], a[1]); err != nil {
			fmt.Fprintln(errw, err)
			return 1
		}
		mark(out, "RENAMED")
		return 0
	}
}

func init() {
	attacks["connect"] = func(a []string, out, errw io.Writer) int {
		// Talk to a Unix socket on the host (docker.sock, an ssh-agent, a
		// session bus): whatever listens there runs outside the sandbox.
		for _, p := range a {
			c, err := net.Dial("unix", p)
			if err != nil {
				fmt.Fprintln(errw, "connect:", err)
				continue
			}
			fmt.Fprintf(c, "hello from the sandbox\n")
			c.Close()
			mark(out, "CONNECTED")
		}
		return 0
	}
}

func usage(w io.Writer, u string) int {
	fmt.Fprintln(w, "usage: cordon __attack "+u)
	return 2
}
