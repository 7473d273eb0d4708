package conformance

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
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
		// The harness fails a case that asked for an attack this build
		// cannot make, rather than let it pass by doing nothing.
		mark(stdout, "NOATTACK")
		fmt.Fprintf(stderr, "cordon __attack: unknown attack %q on %s\n", args[0], runtime.GOOS)
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

func init() {
	attacks["readfds"] = func(names []string, out, errw io.Writer) int {
		// Read every descriptor above stderr as it is (not reopened through
		// /proc), and look up names relative to directory descriptors.
		for fd := 3; fd < 1024; fd++ {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) != nil {
				continue
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFREG:
				buf := make([]byte, 4096)
				n, _ := unix.Pread(fd, buf, 0)
				fmt.Fprintf(out, "fd %d: %q\n", fd, buf[:max(n, 0)])
			case unix.S_IFDIR:
				d := os.NewFile(uintptr(dupFd(fd)), "leaked")
				ents, _ := d.Readdirnames(-1)
				d.Close()
				fmt.Fprintf(out, "fd %d: dir %q\n", fd, ents)
				for _, name := range names {
					g, err := unix.Openat(fd, name, unix.O_RDONLY, 0)
					if err != nil {
						continue
					}
					b := make([]byte, 4096)
					n, _ := unix.Read(g, b)
					unix.Close(g)
					fmt.Fprintf(out, "fd %d/%s: %q\n", fd, name, b[:max(n, 0)])
				}
			}
		}
		return 0
	}
	attacks["writefds"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 1 {
			return usage(errw, "writefds TEXT")
		}
		for fd := 3; fd < 1024; fd++ {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			if n, err := unix.Write(fd, []byte(a[0])); err == nil && n > 0 {
				fmt.Fprintf(out, "wrote fd %d\n", fd)
				mark(out, "FDWRITE")
			}
		}
		return 0
	}
}

// dupFd duplicates fd so reading a leaked directory does not move or close
// the original.
func dupFd(fd int) int {
	n, err := unix.Dup(fd)
	if err != nil {
		return fd
	}
	return n
}

func usage(w io.Writer, u string) int {
	fmt.Fprintln(w, "usage: cordon __attack "+u)
	return 2
}
