package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A host socket the user hands over (--allow-unix-socket PATH) is
// reachable, the socket found at PATH at launch and no other: judged by
// the host's listeners, what each accepted and received, with the
// network off and on; a socket beside it, and one renamed over PATH
// after the launch, are not. The flag naming what is not a socket
// refuses the launch.

// unixAllowWork connects to each name in argv[1:] in turn (N the
// marker of the Nth), sends the case's secret tag and closes; a refusal
// prints nothing.
const unixAllowWork = `import os, socket, sys
for i, n in enumerate(sys.argv[1:]):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(n); s.sendall(os.environ["TAG"].encode()); s.close()
        print("@@" + "SOCK%d" % i + "@@")
    except OSError as e:
        print("refused", n, e)
`

// hostListener is a host socket the case reads without waiting: the
// sandbox has ended when it is asked, so every connection the sandbox
// completed is in its queue with every byte sent on it.
type hostListener struct{ fd int }

// listenHost serves a Unix stream socket at path, open to every user
// (only the sandbox's walls may refuse a connect: the suite's user is
// not the one that listens).
func (h *H) listenHost(path string) hostListener {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
		err = unix.SetNonblock(fd, true)
	}
	if err == nil {
		err = unix.Bind(fd, &unix.SockaddrUnix{Name: path})
	}
	if err == nil {
		err = unix.Listen(fd, 16)
	}
	if err == nil {
		err = os.Chmod(path, 0o777)
	}
	if err != nil {
		h.Fatalf("fixture: listen on %s: %v", path, err)
	}
	h.Cleanup(func() { unix.Close(fd) })
	return hostListener{fd}
}

// drain accepts every queued connection and returns how many there were
// and what they carried.
func (l hostListener) drain() (n int, got string) {
	var b strings.Builder
	buf := make([]byte, 256)
	for {
		c, _, err := unix.Accept(l.fd)
		if err != nil {
			return n, b.String()
		}
		n++
		unix.SetNonblock(c, true)
		for {
			k, err := unix.Read(c, buf)
			if err != nil || k <= 0 {
				break
			}
			b.Write(buf[:k])
		}
		unix.Close(c)
	}
}

func unixAllowCases() []Case {
	return []Case{
		unixAllowCase("unix-allow-host-socket", false),
		unixAllowCase("unix-allow-host-socket-network-on", true),
		{Name: "unix-allow-swapped", Class: Network, Needs: []string{"python3"}, Backends: linuxOnly,
			Summary: "a host socket handed over and then renamed over by another host socket after the launch is not reached: the gate admits the inode recorded at launch; the one handed over, reached before the swap, is",
			Run:     unixAllowSwapped},
		{Name: "unix-allow-not-a-socket", Class: Network, Backends: linuxOnly,
			Summary: "--allow-unix-socket naming a regular file or a missing path refuses the launch, naming the flag and the path; naming a socket, the launch runs",
			Run:     unixAllowRefused},
	}
}

func unixAllowCase(name string, network bool) Case {
	mode := "network off"
	if network {
		mode = "network on"
	}
	return Case{Name: name, Class: Network, Needs: []string{"python3"}, Backends: linuxOnly,
		Summary: mode + ": host sockets handed over with --allow-unix-socket, one in the host's /tmp, are reached (the host's listeners accept and receive the sandbox's bytes); a host socket beside them, not handed over, is not",
		Run: func(h *H) {
			_, p := h.ws()
			p.Network = network
			h.Mkdir("outside")
			h.Write("ws/allow.py", unixAllowWork)
			named, other := h.Path("outside/named.sock"), h.Path("outside/other.sock")
			// Where ssh-agent and tmux keep theirs: the host's /tmp,
			// which native and bwrap replace with a private one.
			tmp := "/tmp/cordon-conf-" + h.Secret[len(h.Secret)-12:] + ".sock"
			os.Remove(tmp)
			ln, lo, lt := h.listenHost(named), h.listenHost(other), h.listenHost(tmp)
			h.Cleanup(func() { os.Remove(tmp) })
			p.UnixSockets = []string{named, tmp}
			tag := "tag-" + h.Secret
			o := h.Sandbox(p, `python3 allow.py "$N" "$T" "$O"`, "N="+named, "T="+tmp, "O="+other, "TAG="+tag)
			h.Expect(o, "SOCK0", "SOCK1")
			h.Refuse(o, "SOCK2")
			for _, l := range []hostListener{ln, lt} {
				if n, got := l.drain(); n != 1 || got != tag {
					h.Errorf("host: a socket handed over accepted %d connection(s) carrying %q, want 1 carrying %q:\n%s", n, got, tag, o)
				}
			}
			if n, _ := lo.drain(); n > 0 {
				h.Errorf("host: the socket not handed over accepted %d connection(s) from inside the sandbox:\n%s", n, o)
			}
		}}
}

// unixAllowSwapped hands over named, reached once; the host then renames
// another socket over the name, at the moment the sandbox waits for it
// (a FIFO in the workspace: the host's rename happens before it writes
// there), and the sandbox connects by the same name again.
func unixAllowSwapped(h *H) {
	w, p := h.ws()
	h.Mkdir("outside")
	h.Write("ws/allow.py", unixAllowWork)
	named, swap := h.Path("outside/named.sock"), h.Path("outside/swap.sock")
	ln, ls := h.listenHost(named), h.listenHost(swap)
	p.UnixSockets = []string{named}
	fifo := filepath.Join(w, "go")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	os.Chmod(fifo, 0o666)
	swapped := make(chan error, 1)
	go func() {
		// Opening for writing waits for the sandbox to open it to read:
		// the launch has resolved the socket by then.
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			swapped <- err
			return
		}
		err = os.Rename(swap, named)
		f.WriteString("go\n")
		f.Close()
		swapped <- err
	}()
	tag := "tag-" + h.Secret
	o := h.Sandbox(p, `python3 allow.py "$N" && read x < go && python3 allow.py "$N" | sed s/SOCK0/SWAPPED/`, "N="+named, "TAG="+tag)
	if err := <-swapped; err != nil {
		h.Fatalf("fixture: swap: %v", err)
	}
	h.Expect(o, "SOCK0")
	h.Refuse(o, "SWAPPED")
	if n, got := ln.drain(); n != 1 || got != tag {
		h.Errorf("host: the socket handed over accepted %d connection(s) carrying %q, want 1 (before the swap) carrying %q:\n%s", n, got, tag, o)
	}
	if n, _ := ls.drain(); n > 0 {
		h.Errorf("host: the socket renamed over the name accepted %d connection(s) from inside the sandbox:\n%s", n, o)
	}
}

// unixAllowRefused names a regular file, then a missing path: each
// launch is refused before the command runs (the host finds no file the
// command would have made), with the flag and the path in the message;
// naming a socket, the same launch runs.
func unixAllowRefused(h *H) {
	w, p := h.ws()
	h.Mkdir("outside")
	file := h.Write("outside/plain", "x")
	sock := h.Path("outside/ok.sock")
	h.listenHost(sock)
	for _, c := range []struct{ path, why string }{
		{file, "is not a Unix socket"}, {h.Path("outside/missing.sock"), "no such file"},
	} {
		q := p
		q.UnixSockets = []string{c.path}
		l := h.Script(q, `touch ran`)
		l.Refusable = "--allow-unix-socket"
		o := h.Launch(l)
		if o.Code != 125 || !strings.Contains(o.Stderr, c.path) || !strings.Contains(o.Stderr, c.why) {
			h.Errorf("--allow-unix-socket %s: want the launch refused (125) naming the path and %q:\n%s", c.path, c.why, o)
		}
		if _, err := os.Stat(filepath.Join(w, "ran")); err == nil {
			h.Errorf("host: the command ran although --allow-unix-socket %s was refused", c.path)
			os.Remove(filepath.Join(w, "ran"))
		}
	}
	p.UnixSockets = []string{sock}
	h.Sandbox(p, `touch ran`)
	if _, err := os.Stat(filepath.Join(w, "ran")); err != nil {
		h.Errorf("host: with --allow-unix-socket naming a socket, the command did not run: %v", err)
	}
}
