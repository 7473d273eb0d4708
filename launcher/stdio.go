package launcher

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/tty"
)

// What crosses into the sandbox on its descriptors (docs/threat-model.md,
// class 16). A descriptor is more than its data: a directory or an O_PATH
// handle lets the sandbox open anything beneath it through
// /proc/self/fd/N/..., whatever the mounts say; a pidfd signals a host
// process; a socket of the host's network namespace can be pointed
// anywhere from it. So each of Stdin, Stdout, Stderr and ExtraFiles that is
// an *os.File is looked at as the child would get it, and refused unless it
// is an ordinary stream: a regular file, a pipe or FIFO, a connected Unix
// stream socket, a terminal, or one of the character devices that only
// carry data (/dev/null, zero, full, random, urandom). A terminal is never
// handed in either (see replaceTerminals).

// ErrDescriptor is wrapped by Start's error when one of the descriptors
// the command would get is of a kind the sandbox must not hold.
var ErrDescriptor = errors.New("descriptor refused")

// DescriptorError says which descriptor was refused, and why.
type DescriptorError struct {
	Name string // "stdin", "stdout", "stderr" or "ExtraFiles[i]"
	Kind string // what it is, e.g. "a directory"
	Path string // what the kernel calls it (/proc/self/fd/N), if known
}

func (e *DescriptorError) Error() string {
	s := e.Name + " is " + e.Kind
	if e.Path != "" {
		s += " (" + quoteIfOdd(e.Path) + ")"
	}
	return s + ": " + ErrDescriptor.Error() + ": the sandbox would reach the host through it, beyond what its policy allows; pass a file, a pipe or /dev/null"
}

func (e *DescriptorError) Unwrap() error { return ErrDescriptor }

// quoteIfOdd quotes a name holding control characters or invalid UTF-8,
// so that a hostile file name cannot drive the user's terminal.
func quoteIfOdd(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}

// checkDescriptors refuses the launch when a descriptor the command would
// get is not an ordinary stream (fdKind). Only *os.File values reach the
// child as they are; os/exec gives any other reader or writer a pipe.
func (c *Cmd) checkDescriptors() error {
	if testhook.SkipDescriptorCheck {
		return nil
	}
	for i, v := range []any{c.Stdin, c.Stdout, c.Stderr} {
		if f, ok := v.(*os.File); ok && f != nil {
			if err := checkFile([]string{"stdin", "stdout", "stderr"}[i], f); err != nil {
				return err
			}
		}
	}
	for i, f := range c.ExtraFiles {
		if f != nil {
			if err := checkFile("ExtraFiles["+strconv.Itoa(i)+"]", f); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkFile(name string, f *os.File) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var kind, path string
	var refuse bool
	var ferr error
	// (Not f.Fd(), which would put the caller's file in blocking mode.)
	if err := sc.Control(func(fd uintptr) {
		if kind, refuse, ferr = fdKind(int(fd)); refuse {
			path, _ = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
		}
	}); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if ferr != nil {
		return fmt.Errorf("%s: %w", name, ferr)
	}
	if !refuse {
		return nil
	}
	if path == "" {
		path = f.Name()
	}
	return &DescriptorError{Name: name, Kind: kind, Path: path}
}

// replaceTerminals keeps the caller's terminal out of a sandbox that has
// no pty of its own (Tty unset; with Tty every terminal among the stdio is
// the pty instead): a terminal on stdin becomes /dev/null, as docker run
// without -i does, and one on stdout or stderr a pipe that this process
// copies to the terminal. Held by the sandbox, the user's terminal could be
// read from while the user types to something else, have its modes
// changed for after the run (stty -echo), and be reached with ioctls.
// What the command switched on in the terminal through its output (the
// alternate screen, mouse reporting, ...) is switched off again by Wait
// (package tty).
func (c *Cmd) replaceTerminals(inner *exec.Cmd) {
	if c.Tty || testhook.SkipTerminalReplace {
		return
	}
	if tty.IsTerminal(inner.Stdin) {
		inner.Stdin = nil
	}
	var out *tty.Writer
	var outF *os.File
	for _, w := range []*io.Writer{&inner.Stdout, &inner.Stderr} {
		if !tty.IsTerminal(*w) {
			continue
		}
		f := (*w).(*os.File)
		// Stdout and stderr on the same terminal are one stream to it:
		// one writer (os/exec then makes one pipe for both), so the
		// tracker sees the bytes in the order the terminal does, or a
		// sequence split across them (ESC[?1049 on one, h on the
		// other) escapes both trackers.
		if out != nil && tty.SameFile(outF, f) {
			*w = out
			continue
		}
		tw := tty.NewWriter(f, c.Stdin)
		c.termOut = append(c.termOut, tw)
		out, outF = tw, f
		*w = tw
	}
}

// resetTerminals, once the sandbox has ended, leaves each terminal it
// wrote to through a pipe with the modes it had.
func (c *Cmd) resetTerminals() {
	for _, w := range c.termOut {
		w.Reset()
	}
	c.termOut = nil
}

// fdKindFromStat is the part of fdKind common to every system: the file
// type from fstat, and for sockets their kind.
func fdKindFromStat(fd int, st *unix.Stat_t) (kind string, refuse bool, err error) {
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory", true, nil
	case unix.S_IFBLK:
		return "a block device", true, nil
	case unix.S_IFLNK:
		return "a symbolic link", true, nil
	case unix.S_IFSOCK:
		return socketKind(fd)
	case unix.S_IFIFO:
		return "a pipe", false, nil
	case unix.S_IFREG:
		return "a regular file", false, nil
	case unix.S_IFCHR:
		if tty.IsTerminalFd(fd) {
			return "a terminal", false, nil
		}
		if dataDevice(st) {
			return "a character device", false, nil
		}
		return fmt.Sprintf("a character device (%d:%d)", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))), true, nil
	}
	return "a file of unknown type", true, nil
}

// socketKind accepts a connected Unix stream (or seqpacket) socket, the
// one kind that is only a stream between two processes: a socket of
// another family belongs to the host's network namespace, and even
// connected can be pointed elsewhere (connect to AF_UNSPEC, then anywhere;
// sendto on a datagram socket); a listening one accepts the host's
// connections.
func socketKind(fd int) (string, bool, error) {
	family, err := sockName(fd, syscall.SYS_GETSOCKNAME)
	if err != nil {
		return "", false, fmt.Errorf("getsockname: %w", err)
	}
	if family != unix.AF_UNIX {
		return "a network socket", true, nil
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return "", false, fmt.Errorf("getsockopt SO_TYPE: %w", err)
	}
	if typ != unix.SOCK_STREAM && typ != unix.SOCK_SEQPACKET {
		return "a Unix datagram socket", true, nil
	}
	if _, err := sockName(fd, syscall.SYS_GETPEERNAME); err != nil {
		return "a Unix socket that is not connected (listening or unbound)", true, nil
	}
	return "a connected Unix socket", false, nil
}

// sockName is the address family getsockname or getpeername (call)
// reports for fd. By hand: unix.Getsockname refuses the address of an
// unnamed socket (a socketpair's, as libuv gives a child's stdio) on some
// systems, where only the family matters here.
func sockName(fd int, call uintptr) (int, error) {
	var rsa unix.RawSockaddrAny
	n := uint32(unsafe.Sizeof(rsa))
	if _, _, e := syscall.Syscall(call, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&n))); e != 0 {
		return 0, e
	}
	return int(rsa.Addr.Family), nil
}

// reopenFiles keeps a regular file on stdin, stdout or stderr from giving
// the sandbox more than the descriptor: on Linux a process reopens its
// descriptors through /proc/self/fd/N, with a fresh open of the file that
// asks only the file's own permissions, on the host's mount, not the
// sandbox's. So cordon run ... < ~/.bashrc would let the command rewrite
// ~/.bashrc. Such a file becomes a pipe this process copies, when the
// reopen would give what the policy does not (reopenGain): writing a file
// opened for reading outside the writable roots, reading a denied one
// opened for writing. ExtraFiles, which the caller names one by one, are
// refused instead: the caller can pass a pipe.
func (c *Cmd) reopenFiles(inner *exec.Cmd) error {
	canon := c.streamCanon
	if canon == nil || testhook.SkipDescriptorCheck {
		return nil
	}
	if f, ok := inner.Stdin.(*os.File); ok && f != nil && reopenGain(f, canon) != "" {
		inner.Stdin = struct{ io.Reader }{f}
	}
	for _, w := range []*io.Writer{&inner.Stdout, &inner.Stderr} {
		if f, ok := (*w).(*os.File); ok && f != nil && reopenGain(f, canon) != "" {
			*w = struct{ io.Writer }{f}
		}
	}
	for i, f := range c.ExtraFiles {
		if f == nil {
			continue
		}
		if gain := reopenGain(f, canon); gain != "" {
			e := &DescriptorError{Name: "ExtraFiles[" + strconv.Itoa(i) + "]", Kind: "a regular file the sandbox could reopen " + gain}
			if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil {
				e.Path = p
			}
			return e
		}
	}
	return nil
}
