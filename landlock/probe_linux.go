package landlock

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// The probe's directory is made in the temporary directory and named for
// the process that made it (probePrefix, its pid, a random tail), so that
// none is left behind: Probe removes its own on every return, a signal
// that would end the process during the probe waits for that removal and
// is then raised again, and a process killed outright (SIGKILL, a crash)
// leaves one that the next probe of the same user removes.
const probePrefix = "cordon-landlock-probe-"

// probeSweepMax bounds the names the sweep reads in the temporary
// directory, which anyone may fill.
const probeSweepMax = 4096

// probeEnding are the signals whose default action ends the process.
var probeEnding = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// makeProbeDir makes the probe's directory and returns it with the
// function that removes it, which the caller runs on every return. The
// signals above are held from here until then (those the process
// ignores stay ignored), and one that came in between is raised again
// after the removal, with the handlers the process had before.
func makeProbeDir() (dir string, done func(), err error) {
	sweepProbes(os.TempDir())
	var held []os.Signal
	for _, s := range probeEnding {
		if !signal.Ignored(s) {
			held = append(held, s)
		}
	}
	// The marker (SIGWINCH, ignored by default) is caught too: done sends
	// it to the process after the removal and reads up to it, so a held
	// signal that the kernel delivered before it has reached the channel
	// by then (the runtime hands the pending signals over lowest number
	// first; the marker's is above every held one) and is not lost to a
	// Stop that came first.
	sigs := make(chan os.Signal, len(held)+1)
	signal.Notify(sigs, append(held, probeMarker)...)
	dir, err = os.MkdirTemp("", probePrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		signal.Stop(sigs)
		return "", nil, fmt.Errorf("probe directory: %w", err)
	}
	if testhook.LandlockProbe != nil {
		testhook.LandlockProbe(dir)
	}
	return dir, func() {
		removeProbeDir(dir)
		var came []syscall.Signal
		unix.Kill(os.Getpid(), probeMarker)
		bound := time.NewTimer(time.Second) // a marker never seen ends the wait
		defer bound.Stop()
	wait:
		for {
			select {
			case s := <-sigs:
				if s == probeMarker {
					break wait
				}
				came = append(came, s.(syscall.Signal))
			case <-bound.C:
				break wait
			}
		}
		signal.Stop(sigs)
		if len(came) == 0 {
			return
		}
		// Raised again now that the directory is gone, at this thread:
		// a signal aimed at the thread itself is taken as the call
		// returns, so the process's own handler (or the default, which
		// ends it) has it before done returns, not at some later moment.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for _, s := range came {
			unix.Tgkill(os.Getpid(), unix.Gettid(), s)
		}
	}, nil
}

// probeMarker is the signal done sends itself to know that every held
// signal has been handed over (makeProbeDir).
const probeMarker = syscall.SIGWINCH

// removeProbeDir removes what a probe makes in dir (granted, and denied
// where Landlock did not hold) and dir itself, by name inside the opened
// directory, never following a link; anything else in it keeps it.
func removeProbeDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	for _, n := range []string{"granted", "denied"} {
		unix.Unlinkat(fd, n, 0)
	}
	unix.Close(fd)
	return unix.Rmdir(dir)
}

// sweepProbes removes the probe directories in tmp that this user's
// processes left when they were killed during a probe: those whose pid
// no longer runs. Errors are ignored: a leftover stays, nothing fails.
func sweepProbes(tmp string) {
	d, err := os.Open(tmp)
	if err != nil {
		return
	}
	defer d.Close()
	uid := os.Getuid()
	for read := 0; read < probeSweepMax; {
		names, err := d.Readdirnames(256)
		read += len(names)
		for _, n := range names {
			pid, ok := probePid(n)
			if !ok || pid == os.Getpid() || unix.Kill(pid, 0) != unix.ESRCH {
				continue
			}
			var st unix.Stat_t
			p := filepath.Join(tmp, n)
			if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid {
				continue
			}
			removeProbeDir(p)
		}
		if err != nil { // io.EOF at the end, or a directory that cannot be read
			return
		}
	}
}

// probePid is the pid in a probe directory's name.
func probePid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, probePrefix)
	if !ok {
		return 0, false
	}
	ps, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(ps)
	return pid, ok && err == nil && pid > 0
}
