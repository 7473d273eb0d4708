package native

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/shown"
)

// The init runs in any program that links this package (cordon, and the
// test binaries that launch through it), before that program's main.
func init() {
	if len(os.Args) >= 3 && os.Args[1] == InitArg {
		os.Exit(initMain(os.Args[2]))
	}
}

// Exit statuses of the init itself: a sandbox that could not be built is
// a cordon error (125), as the launcher reports its own.
const (
	exitSetup    = 125
	exitNoExec   = 126
	exitNotFound = 127
)

func initMain(fdArg string) int {
	// Capabilities, no_new_privs and the seccomp filter are per thread:
	// the command is forked from this one.
	runtime.LockOSThread()
	s, err := readSpec(fdArg)
	if err == nil {
		err = build(s)
	}
	if err != nil {
		shown.Sayf(os.Stderr, "%v", err)
		return exitSetup
	}
	if s.Probe {
		if err := confine(s); err != nil {
			shown.Sayf(os.Stderr, "%v", err)
			return exitSetup
		}
		return 0
	}
	return run(s)
}

func readSpec(fdArg string) (*Spec, error) {
	fd, err := strconv.Atoi(fdArg)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s: bad descriptor %q", InitArg, fdArg)
	}
	defer unix.Close(fd)
	// Mapped, not read: the memfd's pages are mapped as they are, where a
	// read would copy the spec of 900 mounts into 250 KB of fresh heap,
	// each new page of it a fault. The mapping stays for the init's life:
	// the spec's strings are slices of it.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	if st.Size <= 0 || st.Size >= 1<<30 {
		return nil, fmt.Errorf("read spec: size %d", st.Size)
	}
	b, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	s, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return s, nil
}

// Where the init works before the pivot: a tmpfs over the host's /tmp, in
// this mount namespace only, becomes the root; the host's tree is then at
// oldRoot and the sandbox's is built at newRoot.
const (
	scratch = "/tmp"
	oldRoot = "/oldroot"
	newRoot = "/newroot"
)

// build makes the sandbox's mount tree and enters it.
func build(s *Spec) error {
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&[]byte(InitName + "\x00")[0])), 0, 0, 0)
	// Nothing inside may read this process's memory or descriptors.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	cwd, _ := os.Getwd()
	if err := enterScratch(); err != nil {
		return err
	}
	old, err := unix.Open(oldRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", oldRoot, err)
	}
	// Closed once: on an error return here, or below before entering the
	// sandbox (a second close could hit a descriptor opened since).
	oldOpen := true
	defer func() {
		if oldOpen {
			unix.Close(old)
		}
	}()

	// The host's whole tree, as the model says of "/": read-only, on a
	// root of the sandbox's own (rootOfItsOwn: the second wall's read
	// rule needs one), or the host's root itself, writable.
	var rootAttr uint64 = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	if !s.RootWritable && !s.weakened("readonly-root") {
		rootAttr |= unix.MOUNT_ATTR_RDONLY
	}
	ownRoot := !s.RootWritable && !s.weakened("own-root")
	if ownRoot {
		err = rootOfItsOwn(old, rootAttr)
	} else {
		err = attach(old, "", rootAttr, unix.AT_FDCWD, newRoot, nil, nil)
	}
	if err != nil {
		return fmt.Errorf("bind / at %s: %w", newRoot, err)
	}
	nr, err := unix.Open(newRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", newRoot, err)
	}
	defer unix.Close(nr)
	if err := mountTree(s, old, nr); err != nil {
		return err
	}
	if ownRoot && !s.weakened("readonly-root") {
		if err := unix.MountSetattr(nr, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("read-only %s: %w", newRoot, err)
		}
	}

	// Leave the host's tree behind, then the scratch root.
	unix.Close(old)
	oldOpen = false
	if err := enterSandbox(s, cwd); err != nil {
		return err
	}
	if !s.Network {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("loopback: %w", err)
		}
	}
	return nil
}

// enterScratch makes this mount namespace's mounts stop propagating back
// to the host and pivots into a scratch tmpfs, the host's tree at
// oldRoot.
func enterScratch() error {
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make / a slave mount: %w", err)
	}
	if err := unix.Mount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", scratch, err)
	}
	if err := unix.Chdir(scratch); err != nil {
		return err
	}
	for _, d := range []string{"oldroot", "newroot"} {
		if err := unix.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("mkdir %s: %w", d, err)
		}
	}
	if err := unix.PivotRoot(".", "oldroot"); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	return unix.Chdir("/")
}

// mountTree makes the sandbox's /proc, /dev and the policy's mounts on
// the tree at nr, taking what it binds from the host's tree at old.
func mountTree(s *Spec, old, nr int) error {
	if err := mountProc(s, old); err != nil && !s.weakened("pid-namespace") {
		return err
	}
	if err := mountDev(old); err != nil {
		return err
	}
	done := &fdBatch{}
	defer done.flush()
	for _, m := range s.Mounts {
		if s.weakened("mask-perms") && m.What == "mask" && m.Src != "" && !strings.HasSuffix(m.Src, "/empty") {
			// A plain tmpfs, listable, instead of the prepared mask.
			if err := unix.Mount("tmpfs", newRoot+m.Path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
				return err
			}
			continue
		}
		if err := mountOne(old, nr, m, done); err != nil {
			return err
		}
	}
	return nil
}

// enterSandbox detaches the host's tree, makes the tree at newRoot the
// root, detaches the scratch root and changes to the working directory:
// s.Chdir, else the launcher's own if the sandbox has it, else /.
func enterSandbox(s *Spec, cwd string) error {
	if err := unix.Unmount(oldRoot, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's tree: %w", err)
	}
	if err := unix.Chdir(newRoot); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root into the sandbox: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the scratch root: %w", err)
	}
	// The tree's mounts are slaves of the host's: a mount the host makes
	// later under a shared one (automounts, FUSE, udisks) would arrive
	// inside with the host's flags, writable. None arrives now.
	if !s.weakened("private-propagation") {
		if err := unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("make the sandbox's mounts private: %w", err)
		}
	}
	dir := s.Chdir
	if dir == "" {
		dir = cwd
	}
	if err := unix.Chdir(dir); err != nil {
		if s.Chdir != "" {
			return fmt.Errorf("chdir %s: %w", s.Chdir, err)
		}
		return unix.Chdir("/")
	}
	return nil
}

// loopbackUp brings up lo in the sandbox's empty network namespace, as
// bwrap does: programs expect 127.0.0.1 to work.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// confine drops every capability of this thread (and what it forks),
// bounding and ambient sets included, sets no_new_privs, restricts the
// thread with Landlock (landlock) and installs the seccomp filter. The
// init's other threads keep the capabilities they have in the sandbox's
// user namespace; the init holds nothing of the
// host by now, and is not dumpable, so nothing inside can use them.
func confine(s *Spec) error {
	if s.weakened("cap-drop") {
		rfd, err := landlock(s)
		if err != nil {
			return err
		}
		return installFilter(s, rfd)
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	// After everything the init does on the tree, before the filter
	// (which need not allow Landlock's calls).
	rfd, err := landlock(s)
	if err != nil {
		return err
	}
	return installFilter(s, rfd)
}

// installFilter installs the seccomp program on this thread; with a
// gate, with a listener, which it sends to the launcher, with the
// sandbox's Landlock ruleset rfd when there is one (-1: none). Nothing
// after it may make a name before the launcher serves: it has the
// listener once SendFd returns.
func installFilter(s *Spec, rfd int) error {
	if rfd >= 0 {
		defer unix.Close(rfd)
	}
	if s.Gate > 0 && len(s.Seccomp) > 0 {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
		// The socket diagnostics of the sandbox's network namespace,
		// for the gate's record of its own Unix sockets; made before the
		// filter, which refuses NETLINK_SOCK_DIAG.
		diag, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if err != nil {
			return fmt.Errorf("socket diagnostics: %w", err)
		}
		defer unix.Close(diag)
		l, err := gate.Install(s.Seccomp)
		if err != nil {
			return fmt.Errorf("entry gate (seccomp user notification, Linux 5.0 or later, and no other supervisor around cordon): %w", err)
		}
		fds := []int{l, diag}
		if rfd >= 0 {
			fds = append(fds, rfd)
		}
		err = gate.SendFd(s.Gate, fds...)
		unix.Close(l)
		unix.Close(s.Gate)
		return err
	}
	if len(s.Seccomp) > 0 {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
		if len(s.Seccomp)%8 != 0 {
			return errors.New("seccomp program: not a whole number of instructions")
		}
		prog := make([]unix.SockFilter, len(s.Seccomp)/8)
		for i := range prog {
			b := s.Seccomp[i*8:]
			prog[i] = unix.SockFilter{
				Code: uint16(b[0]) | uint16(b[1])<<8,
				Jt:   b[2],
				Jf:   b[3],
				K:    uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24,
			}
		}
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
		runtime.KeepAlive(prog)
	}
	return nil
}

// handListener listens on 127.0.0.1:port in the sandbox's network
// namespace and sends the listener to the launcher over the socket fd,
// which it then closes: the proxy the launcher runs on it is reachable
// from inside the sandbox only.
func handListener(fd, port int) error {
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(l)
	if err := unix.Bind(l, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Listen(l, 128); err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Sendmsg(fd, []byte{'L'}, unix.UnixRights(l), nil, 0); err != nil {
		return fmt.Errorf("handing the proxy's socket to cordon: %w", err)
	}
	return unix.Close(fd)
}

// forwarded are the signals the init passes on to the command.
var forwarded = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGCONT, syscall.SIGALRM}

// dropped are the signals that, sent to pid 1 by a process inside, would
// end the init with a Go crash report (the runtime throws on a synchronous
// signal nobody asked for): caught and let go. Faults of the init's own
// still crash it.
var dropped = []os.Signal{syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE,
	syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGSTKFLT}

// toGroup are the keyboard signals, passed to the command's process group
// as a terminal passes them to its foreground job: a shell waiting for a
// child ends with it instead of after it.
func toGroup(sig syscall.Signal) bool { return sig == syscall.SIGINT || sig == syscall.SIGQUIT }

// run starts the command and waits for it as pid 1: it reaps every
// process that ends in the sandbox and exits with the command's status
// (128+N when signal N ended it); its exit ends everything left inside.
func run(s *Spec) int {
	sigs := catchSignals()
	// Nothing but stdio and the caller's files reaches the command.
	if !s.weakened("close-on-exec") {
		unix.CloseRange(uint(3+s.Files), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	}
	if s.ProxyPort != 0 {
		if err := handListener(s.ProxyFd, s.ProxyPort); err != nil {
			shown.Sayf(os.Stderr, "network allowlist: %v", err)
			return exitSetup
		}
	}
	path := s.Path
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			shown.Sayf(os.Stderr, "%s: %v", path, err)
			return exitNotFound
		}
		path = lp
	}
	if err := confine(s); err != nil {
		shown.Sayf(os.Stderr, "%v", err)
		return exitSetup
	}
	pid, err := syscall.ForkExec(path, s.Argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: childFiles(s),
		// A session of its own, without the caller's terminal.
		Sys: &syscall.SysProcAttr{Setsid: !s.weakened("new-session"),
			Setctty: s.Ctty && !s.weakened("new-session"), Ctty: s.CttyFd},
	})
	if err != nil {
		shown.Sayf(os.Stderr, "%s: %v", filepath.Base(path), err)
		if errors.Is(err, syscall.ENOENT) {
			return exitNotFound
		}
		return exitNoExec
	}
	go forward(sigs, pid)
	return reap(s, pid)
}

// catchSignals catches the signals to forward to the command and drops
// the ones pid 1 must not die of. A signal the caller ignores (nohup, a
// script's background job) stays ignored for the command: not caught
// here, it is inherited as is.
func catchSignals() chan os.Signal {
	sigs := make(chan os.Signal, 8)
	for _, sig := range forwarded {
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
	drop := make(chan os.Signal, 1)
	signal.Notify(drop, dropped...)
	go func() {
		for range drop {
		}
	}()
	return sigs
}

// childFiles are the command's descriptors: stdio and the caller's
// files, those in s.Closed closed in the child.
func childFiles(s *Spec) []uintptr {
	files := make([]uintptr, 3+s.Files)
	for i := range files {
		files[i] = uintptr(i)
	}
	for _, fd := range s.Closed {
		if fd >= 3 && fd < len(files) {
			files[fd] = ^uintptr(0) // -1: closed in the child
		}
	}
	return files
}

// forward passes each caught signal to the command, the keyboard's to
// its process group.
func forward(sigs chan os.Signal, pid int) {
	for sig := range sigs {
		s := sig.(syscall.Signal)
		if toGroup(s) && unix.Kill(-pid, s) == nil {
			continue
		}
		unix.Kill(pid, s)
	}
}

// reap waits for every process that ends in the sandbox until the
// command pid does, and returns its status (128+N for signal N).
func reap(s *Spec, pid int) int {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			shown.Sayf(os.Stderr, "wait: %v", err)
			return exitSetup
		}
		if got != pid {
			continue
		}
		code := -1
		switch {
		case ws.Exited():
			code = ws.ExitStatus()
		case ws.Signaled():
			code = 128 + int(ws.Signal())
		}
		if code < 0 {
			continue
		}
		// Only as pid 1 of the sandbox's own pid namespace does kill(-1)
		// stay inside it (a weakened init, without one, is not).
		if s.StatusFd > 0 && os.Getpid() == 1 && endAll() {
			unix.Write(s.StatusFd, []byte{byte(code)})
		}
		return code
	}
}

// endAll kills every other process in the sandbox and reaps them: what
// the kernel does when pid 1 exits, done before the status is reported,
// so that nothing of the sandbox runs once its caller has the status.
// kill(-1) from pid 1 reaches every process of the namespace but itself,
// and a process leaves init's descendants only by ending, so the loop is
// done when a kill finds no process left (ESRCH). Any other failure
// reports false: the caller then learns the status from the init's exit,
// after the kernel has ended the rest.
func endAll() bool {
	for {
		switch err := unix.Kill(-1, unix.SIGKILL); err {
		case nil:
		case unix.ESRCH:
			return true
		default:
			return false
		}
		for {
			_, err := unix.Wait4(-1, nil, unix.WALL, nil)
			if err == unix.ECHILD {
				break
			}
			if err != nil && err != unix.EINTR {
				return false
			}
		}
	}
}
