package conformance

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	attacks["listen"] = attackListen
}

// attackListen (attack listen PORT FILE DONE): listen on every interface,
// at PORT (bind, then listen) and at a port the kernel picks (listen on a
// socket never bound, which binds it to every interface without a bind
// a security module would see); write in FILE the ports listened on, one
// a line; hold the listeners until the file DONE appears (the host has
// tried to connect) or 30 s pass.
func attackListen(a []string, out, errw io.Writer) int {
	if len(a) != 3 {
		return usage(errw, "listen PORT FILE DONE")
	}
	var ports string
	if ln, err := net.Listen("tcp", ":"+a[0]); err == nil {
		defer ln.Close()
		ports += a[0] + "\n"
	} else {
		fmt.Fprintln(errw, "listen:", err)
	}
	if s, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		fmt.Fprintln(errw, "listen: socket:", err)
	} else if err := unix.Listen(s, 8); err != nil {
		fmt.Fprintln(errw, "listen without bind:", err)
	} else if sa, err := unix.Getsockname(s); err == nil {
		defer unix.Close(s)
		ports += strconv.Itoa(sa.(*unix.SockaddrInet4).Port) + "\n"
	}
	if err := os.WriteFile(a[1], []byte(ports), 0o644); err != nil {
		fmt.Fprintln(errw, "listen:", err)
		return 1
	}
	if ports != "" {
		mark(out, "LISTENING")
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(a[2]); err == nil {
			break
		}
	}
	return 0
}
