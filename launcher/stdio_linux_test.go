package launcher

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/tty"
)

// fdFile opens fd as an *os.File closed with the test.
func fdFile(t *testing.T, fd int, err error) *os.File {
	t.Helper()
	require.NoError(t, err)
	f := os.NewFile(uintptr(fd), "fd")
	t.Cleanup(func() { f.Close() })
	return f
}

// Each kind of descriptor that is a handle on something of the host is
// refused on stdin, stdout, stderr and in ExtraFiles, before anything is
// launched: Start's error names the descriptor and its kind, and wraps
// ErrDescriptor.
func TestDescriptorRefused(t *testing.T) {
	dir := t.TempDir()
	refused := map[string]func(t *testing.T) *os.File{
		"a directory": func(t *testing.T) *os.File {
			f, err := os.Open(dir)
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			return f
		},
		"an O_PATH handle": func(t *testing.T) *os.File {
			fd, err := unix.Open(filepath.Join(dir), unix.O_PATH|unix.O_CLOEXEC, 0)
			return fdFile(t, fd, err)
		},
		"a pidfd": func(t *testing.T) *os.File {
			fd, err := unix.PidfdOpen(os.Getpid(), 0)
			if err != nil {
				t.Skipf("pidfd_open: %v", err)
			}
			return fdFile(t, fd, err)
		},
		"a namespace handle": func(t *testing.T) *os.File {
			fd, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			return fdFile(t, fd, err)
		},
		"an anonymous-inode descriptor": func(t *testing.T) *os.File {
			fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
			return fdFile(t, fd, err)
		},
		"a network socket": func(t *testing.T) *os.File {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			return fdFile(t, fd, err)
		},
		"a Unix datagram socket": func(t *testing.T) *os.File {
			p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
			fdFile(t, p[1], err)
			return fdFile(t, p[0], err)
		},
		"a Unix socket that is not connected": func(t *testing.T) *os.File {
			l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			f, err := l.(*net.UnixListener).File()
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			return f
		},
		"a character device": func(t *testing.T) *os.File {
			// /dev/kmsg (1:11): the kernel log, no stream of the caller.
			f, err := os.Open("/dev/kmsg")
			if err != nil {
				t.Skipf("%v", err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		},
	}
	for kind, open := range refused {
		for _, where := range []string{"stdin", "stdout", "stderr", "ExtraFiles[1]"} {
			t.Run(kind+"/"+where, func(t *testing.T) {
				f := open(t)
				cmd := Command(workspacePolicy(t, t.TempDir()), "true")
				switch where {
				case "stdin":
					cmd.Stdin = f
				case "stdout":
					cmd.Stdout = f
				case "stderr":
					cmd.Stderr = f
				default:
					cmd.ExtraFiles = []*os.File{os.Stdin, f}
				}
				err := cmd.Start()
				if err == nil {
					cmd.Wait()
				}
				require.ErrorIs(t, err, ErrDescriptor)
				var de *DescriptorError
				require.True(t, errors.As(err, &de))
				require.Equal(t, where, de.Name)
				want := kind
				require.True(t, strings.HasPrefix(de.Kind, want), "%s: %q", where, de.Kind)
				require.True(t, strings.HasPrefix(err.Error(), where+" is "), "%v", err)
				require.Nil(t, cmd.Process, "nothing was started")
			})
		}
	}
}

// The ordinary streams are handed in as they are: a regular file, a pipe,
// a connected Unix socket, /dev/null, in stdio and ExtraFiles.
func TestDescriptorAccepted(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	in := filepath.Join(ws, "in")
	require.NoError(t, os.WriteFile(in, []byte("file\n"), 0o644))
	file, err := os.Open(in)
	require.NoError(t, err)
	defer file.Close()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	pw.WriteString("pipe\n")
	pw.Close()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	sock, peer := os.NewFile(uintptr(sp[0]), "sock"), os.NewFile(uintptr(sp[1]), "peer")
	defer sock.Close()
	peer.WriteString("socket\n")
	peer.Close()
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()

	cmd := Command(workspacePolicy(t, ws), "sh", "-c", `cat; cat <&3; cat <&4; cat <&5`)
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout = file, &out
	cmd.ExtraFiles = []*os.File{pr, sock, null}
	require.NoError(t, cmd.Run())
	require.Equal(t, "file\npipe\nsocket\n", out.String())
}

// Without Tty, the caller's terminal does not enter the sandbox: on stdin
// the command reads /dev/null, on stdout and stderr it writes to a pipe
// copied to the terminal (one for both: the terminal sees one stream),
// and the screen modes it switched on are switched off once it has ended.
// What it asked the terminal (here, the cursor position) is answered
// after it has ended, as nothing reads the terminal while it runs: cordon
// asks for the device attributes and reads up to that answer, so the next
// line read from the terminal is what the user types next.
func TestTerminalReplacedWithoutTty(t *testing.T) {
	testenv.RequireBwrap(t)
	m, s, err := tty.OpenPty()
	require.NoError(t, err)
	defer s.Close()
	output := playTerminal(t, m)
	cmd := Command(workspacePolicy(t, t.TempDir()), "sh", "-c",
		`test -t 0 || echo IN-NOT-TTY; test -t 1 || echo OUT-NOT-TTY; test -t 2 || echo ERR-NOT-TTY >&2
read -r x || echo EOF; [ /proc/self/fd/1 -ef /proc/self/fd/2 ] && echo ONE-PIPE; printf '\033[?1049h\033[?2004h\033[6n'`)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	require.NoError(t, cmd.Run())
	_, err = unix.Write(m, []byte("typed\n"))
	require.NoError(t, err)
	line := make([]byte, 64)
	n, err := s.Read(line)
	require.NoError(t, err)
	require.Equal(t, "typed\n", string(line[:n]), "the line read after the run")
	out := output()
	for _, want := range []string{"IN-NOT-TTY", "OUT-NOT-TTY", "ERR-NOT-TTY", "EOF", "ONE-PIPE"} {
		require.Contains(t, out, want)
	}
	// (The line discipline echoes the answer as it arrives, ^[[9;9R,
	// while nothing reads it.)
	out = strings.Replace(out, "^[[9;9R", "", 1)
	// The line typed after the run is echoed, as the terminal's modes
	// are back; whether the echo was read yet is not what this test asks.
	out = strings.TrimSuffix(out, "typed\r\n")
	require.True(t, strings.HasSuffix(out, "\x1b[?1049h\x1b[?2004h\x1b[6n\x1b[!p\x1b[4l\x1b[0m\x0f\x1b(B\x1b[?2004l\x1b[?7h\x1b[?1049l\x1b[c"), "%q", out)
}

// playTerminal is a terminal on pty master m that answers the cursor
// position (CSI 6 n) and the device attributes (CSI c) as it reads each
// query; output returns what it has read so far. m is closed with the
// test.
func playTerminal(t *testing.T, m int) (output func() string) {
	var mu sync.Mutex
	var got []byte
	answered := map[string]int{}
	answers := map[string]string{"\x1b[6n": "\x1b[9;9R", "\x1b[c": "\x1b[?1;2c"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := unix.Read(m, buf)
			if n <= 0 || err != nil {
				return
			}
			mu.Lock()
			got = append(got, buf[:n]...)
			for q, a := range answers {
				for ; answered[q] < strings.Count(string(got), q); answered[q]++ {
					unix.Write(m, []byte(a))
				}
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { unix.Close(m); <-done })
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return string(got)
	}
}

// Stdout and stderr on one terminal are one stream to it: a sequence
// begun on one and ended on the other switches the mode on, and is
// switched off at the end. On two terminals, each gets its own reset.
func TestTerminalStdoutStderrOneStream(t *testing.T) {
	// Nothing answers here (TestTerminalReplacedWithoutTty has a
	// terminal that does).
	testhook.SkipTermSettle = true
	t.Cleanup(func() { testhook.SkipTermSettle = false })
	readAll := func(m int) string {
		require.NoError(t, unix.SetNonblock(m, true))
		var got []byte
		buf := make([]byte, 4096)
		for {
			n, err := unix.Read(m, buf)
			if n <= 0 || err != nil {
				return string(got)
			}
			got = append(got, buf[:n]...)
		}
	}
	m, s, err := tty.OpenPty()
	require.NoError(t, err)
	defer unix.Close(m)
	defer s.Close()
	// Another descriptor on the same terminal, as a shell's 2>&1 gives.
	fd, err := unix.Dup(int(s.Fd()))
	require.NoError(t, err)
	s2 := os.NewFile(uintptr(fd), s.Name())
	defer s2.Close()
	m2, o, err := tty.OpenPty()
	require.NoError(t, err)
	defer unix.Close(m2)
	defer o.Close()

	c := &Cmd{}
	inner := &exec.Cmd{Stdout: s, Stderr: s2}
	c.replaceTerminals(inner)
	io.WriteString(inner.Stdout, "\x1b[?1049")
	io.WriteString(inner.Stderr, "h\x1b[?1000")
	io.WriteString(inner.Stdout, "h")
	c.resetTerminals()
	require.Equal(t, "\x1b[?1049h\x1b[?1000h\x1b[!p\x1b[4l\x1b[0m\x0f\x1b(B\x1b[?1000l\x1b[?7h\x1b[?1049l", readAll(m))

	c = &Cmd{}
	inner = &exec.Cmd{Stdout: s, Stderr: o}
	c.replaceTerminals(inner)
	io.WriteString(inner.Stdout, "\x1b[?2004h")
	io.WriteString(inner.Stderr, "\x1b[?25l")
	c.resetTerminals()
	require.Equal(t, "\x1b[?2004h\x1b[!p\x1b[4l\x1b[0m\x0f\x1b(B\x1b[?2004l\x1b[?7h", readAll(m))
	require.Equal(t, "\x1b[?25l\x1b[!p\x1b[4l\x1b[0m\x0f\x1b(B\x1b[?7h\x1b[?25h", readAll(m2))
}

// A regular file reopened through /proc/self/fd gets the file's own
// permissions, on the host's mount: a read-only one outside the writable
// roots would become writable. On stdin it becomes a pipe (the data still
// arrives); in ExtraFiles, which the caller names, it is refused. One in
// the workspace is handed in as it is.
func TestReopenableFile(t *testing.T) {
	testenv.RequireBwrap(t)
	ws, outside := t.TempDir(), t.TempDir()
	rc := filepath.Join(outside, "rc")
	require.NoError(t, os.WriteFile(rc, []byte("original\n"), 0o644))
	in := filepath.Join(ws, "in")
	require.NoError(t, os.WriteFile(in, []byte("inside\n"), 0o644))
	open := func(p string) *os.File {
		f, err := os.Open(p)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}

	cmd := Command(workspacePolicy(t, ws), "sh", "-c", `ls -l /proc/self/fd/0; exec 7<&0; test -f /proc/self/fd/7 && echo pwned > /proc/self/fd/7; cat <&7`)
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout = open(rc), &out
	require.NoError(t, cmd.Run(), out.String())
	require.Contains(t, out.String(), "pipe:")
	require.Contains(t, out.String(), "original\n")
	b, _ := os.ReadFile(rc)
	require.Equal(t, "original\n", string(b))

	cmd = Command(workspacePolicy(t, ws), "true")
	cmd.ExtraFiles = []*os.File{open(rc)}
	err := cmd.Run()
	var de *DescriptorError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "ExtraFiles[0]", de.Name)
	require.Contains(t, err.Error(), "reopen for writing")
	require.Contains(t, err.Error(), rc)

	cmd = Command(workspacePolicy(t, ws), "sh", "-c", `ls -l /proc/self/fd/0 /proc/self/fd/3`)
	out.Reset()
	cmd.Stdin, cmd.Stdout, cmd.ExtraFiles = open(in), &out, []*os.File{open(in)}
	require.NoError(t, cmd.Run(), out.String())
	require.Equal(t, 2, strings.Count(out.String(), in), out.String())

	// A read-only file of the user's own (a key, 0400) given on stdin: its
	// owner may change its mode through the descriptor without reopening
	// it, so it becomes a pipe too, and the host's file keeps its mode.
	key := filepath.Join(outside, "id.pem")
	require.NoError(t, os.WriteFile(key, []byte("KEY\n"), 0o400))
	cmd = Command(workspacePolicy(t, ws), "sh", "-c", `chmod 666 /proc/self/fd/0; touch -d 2001-01-01 /proc/self/fd/0; cat`)
	out.Reset()
	cmd.Stdin, cmd.Stdout = open(key), &out
	require.NoError(t, cmd.Run(), out.String())
	require.Equal(t, "KEY\n", out.String())
	fi, err := os.Stat(key)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o400), fi.Mode().Perm())
	require.NotEqual(t, 2001, fi.ModTime().Year())
}
