package conformance

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// stuckListener listens on a loopback port whose accept queue is full
// (backlog 0, one connection never accepted): a connect to it stays in
// flight, its SYN unanswered, until it times out.
func (h *H) stuckListener() int {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		h.Fatalf("fixture: socket: %v", err)
	}
	h.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		h.Fatalf("fixture: bind: %v", err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		h.Fatalf("fixture: listen: %v", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		h.Fatalf("fixture: getsockname: %v", err)
	}
	port := sa.(*unix.SockaddrInet4).Port
	filler, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err != nil {
		h.Fatalf("fixture: filling the accept queue: %v", err)
	}
	h.Cleanup(func() { filler.Close() })
	return port
}

// synSent reports whether a TCP connect to 127.0.0.1:port is in flight
// on the host (state SYN_SENT in /proc/net/tcp).
func synSent(port int) bool {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return false
	}
	defer f.Close()
	want := fmt.Sprintf("0100007F:%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 3 && fs[2] == want && fs[3] == "02" {
			return true
		}
	}
	return false
}
