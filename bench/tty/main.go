//go:build linux

// Command tty measures cordon's interactive mode (BENCHMARKS.md): what the
// pty relay adds to a launch, and to a keystroke's round trip.
//
// It builds cordon (CGO_ENABLED=0) and gives each run a real terminal: a
// pty whose slave is stdin, stdout and stderr of cordon, as a terminal
// emulator's is. Then:
//
//	launch: N alternations of 'cordon run --no-tty' and 'cordon run --tty'
//	        (--workspace W -- /bin/true), wall time of Start+Wait each;
//	        --no-tty execs bwrap in cordon's place, --tty starts it as a
//	        child and waits
//	inproc: N alternations of launcher.Cmd.Run in this process with the
//	        terminal as stdio, Tty false and true: both start bwrap as a
//	        child, so the difference is the pty, relay and helper alone
//	echo:   K round trips of one byte: written to the terminal's master,
//	        read back once 'cat' in raw mode has echoed it; cat run
//	        directly on the terminal, and inside 'cordon run' (whose relay
//	        and second pty the byte then crosses twice)
//
//	go run ./bench/tty [-n 100] [-k 2000]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/workspace"
)

func main() {
	n := flag.Int("n", 100, "launch alternations")
	k := flag.Int("k", 2000, "keystroke round trips per setup")
	backend := flag.String("backend", "auto", "the sandbox backend of every launch (auto, bwrap, native)")
	flag.Parse()
	dir, err := os.MkdirTemp("", "cordon-bench-tty-")
	check(err)
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "cordon")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cordon")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	check(build.Run())
	ws := filepath.Join(dir, "ws")
	check(os.Mkdir(ws, 0o755))

	run := func(argv ...string) time.Duration {
		m, s := openPty()
		defer m.Close()
		defer s.Close()
		go drain(m)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = ws
		cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		t0 := time.Now()
		check(cmd.Run())
		return time.Since(t0)
	}
	var plain, tty []time.Duration
	for i := 0; i < *n+3; i++ {
		a := run(bin, "run", "--backend", *backend, "--no-tty", "--workspace", ws, "--", "/bin/true")
		b := run(bin, "run", "--backend", *backend, "--tty", "--workspace", ws, "--", "/bin/true")
		if i >= 3 { // warm-up
			plain, tty = append(plain, a), append(tty, b)
		}
	}
	report("launch --no-tty", plain)
	report("launch --tty", tty)
	reportDiff("launch --tty − --no-tty, paired", tty, plain)

	p, err := workspace.Preset(ws, workspace.Options{Home: dir})
	check(err)
	inproc := func(tty bool) time.Duration {
		m, s := openPty()
		defer m.Close()
		defer s.Close()
		go drain(m)
		cmd := launcher.Command(p, "/bin/true")
		cmd.Dir = ws
		cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
		cmd.Tty = tty
		t0 := time.Now()
		check(cmd.Run())
		return time.Since(t0)
	}
	plain, tty = nil, nil
	for i := 0; i < *n+3; i++ {
		a, b := inproc(false), inproc(true)
		if i >= 3 {
			plain, tty = append(plain, a), append(tty, b)
		}
	}
	report("launcher.Cmd.Run, Tty false", plain)
	report("launcher.Cmd.Run, Tty true", tty)
	reportDiff("Cmd.Run Tty true − false, paired", tty, plain)

	echo := func(argv ...string) []time.Duration {
		m, s := openPty()
		defer m.Close()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = ws
		cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		check(cmd.Start())
		s.Close()
		// Wait for the "ready" line, then time single bytes.
		buf := make([]byte, 256)
		var seen []byte
		for !slices.Contains(seen, '!') {
			n, err := m.Read(buf)
			check(err)
			seen = append(seen, buf[:n]...)
		}
		var out []time.Duration
		for i := 0; i < *k; i++ {
			t0 := time.Now()
			_, err := m.Write([]byte{'x'})
			check(err)
			for got := false; !got; {
				n, err := m.Read(buf)
				check(err)
				got = slices.Contains(buf[:n], 'x')
			}
			out = append(out, time.Since(t0))
		}
		m.Write([]byte{4})
		cmd.Process.Kill()
		cmd.Wait()
		return out
	}
	const catRaw = `stty raw -echo; echo '!'; exec cat`
	report("keystroke echo, cat on the terminal", echo("/bin/sh", "-c", catRaw))
	report("keystroke echo, cat inside cordon run", echo(bin, "run", "--backend", *backend, "--workspace", ws, "--", "/bin/sh", "-c", catRaw))
}

// reportDiff reports the differences a[i]−b[i] of launches made one
// after the other, so that a slower moment of the machine weighs on both.
func reportDiff(name string, a, b []time.Duration) {
	d := make([]time.Duration, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	report(name, d)
}

func report(name string, d []time.Duration) {
	d = slices.Clone(d)
	slices.Sort(d)
	q := func(p float64) string {
		v := d[int(p*float64(len(d)-1))]
		return strconv.FormatFloat(float64(v.Microseconds())/1000, 'f', 3, 64) + " ms"
	}
	fmt.Printf("%-40s n=%-5d min %s  median %s  p90 %s  p99 %s\n", name, len(d), q(0), q(0.5), q(0.9), q(0.99))
}

func openPty() (*os.File, *os.File) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	check(err)
	check(unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	check(err)
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	check(err)
	check(unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}))
	return m, s
}

func drain(m *os.File) {
	buf := make([]byte, 4096)
	for {
		if _, err := m.Read(buf); err != nil {
			return
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/tty:", err)
		os.Exit(1)
	}
}
