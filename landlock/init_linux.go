package landlock

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/shown"
	"github.com/cordon-sandbox/cordon/internal/timing"
)

// The init runs in any program that links this package (cordon, and the
// test binaries that launch through it), before that program's main: it
// starts the command confined and stays above it as its keeper (see
// keep), or exits.
func init() {
	if len(os.Args) >= 3 && os.Args[1] == InitArg {
		os.Exit(initMain(os.Args[2]))
	}
}

// Exit statuses of the init itself, as the launcher reports its own: a
// sandbox that could not be built is a cordon error.
const (
	exitSetup    = 125
	exitNoExec   = 126
	exitNotFound = 127
)

func initMain(fdArg string) int {
	// Capabilities, no_new_privs, the Landlock domain and the seccomp
	// filter are per thread: everything is done on this one, which then
	// execs the command.
	runtime.LockOSThread()
	timing.Mark("init", "go start")
	s, err := readSpec(fdArg)
	if err != nil {
		shown.Sayf(os.Stderr, "%v", err)
		return exitSetup
	}
	if s.Probe != "" {
		if err := probeMain(s); err != nil {
			shown.Sayf(os.Stderr, "%v", err)
			return exitSetup
		}
		return 0
	}
	path := s.Path
	if path == "" || len(s.Argv) == 0 {
		shown.Sayf(os.Stderr, "no command in the spec")
		return exitSetup
	}
	// Looked up before the domain is in force, as the launcher checked
	// it; the exec below is what the domain decides.
	if !containsSlash(path) {
		lp, err := exec.LookPath(path)
		if err != nil {
			shown.Sayf(os.Stderr, "%s: %v", path, err)
			return exitNotFound
		}
		path = lp
	}
	// Nothing but stdio and the caller's files reaches the command: the
	// Go runtime's own descriptors, and the caller's nil entries, close
	// at the exec.
	unix.CloseRange(uint(3+s.Files), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	for _, fd := range s.Closed {
		if fd >= 3 && fd < 3+s.Files {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	timing.Mark("init", "spec")
	if !s.weakened("keeper") {
		// The init stays above the command, for the sandbox to end
		// with the launcher (keeper_linux.go).
		return keep(s, path)
	}
	if err := confine(s); err != nil {
		shown.Sayf(os.Stderr, "%v", err)
		return exitSetup
	}
	err = syscall.Exec(path, s.Argv, os.Environ())
	shown.Sayf(os.Stderr, "%s: %v", path, err)
	if errors.Is(err, syscall.ENOENT) {
		return exitNotFound
	}
	return exitNoExec
}

func containsSlash(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			return true
		}
	}
	return false
}

func readSpec(fdArg string) (*Spec, error) {
	fd, err := strconv.Atoi(fdArg)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s: bad descriptor %q", InitArg, fdArg)
	}
	f := os.NewFile(uintptr(fd), "spec")
	defer f.Close()
	b, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	s, err := DecodeSpec(b)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if s.Plan == nil {
		return nil, errors.New("spec: no plan")
	}
	return s, nil
}

func readAll(f *os.File) ([]byte, error) {
	var b []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil || n == 0 {
			if len(b) > 0 {
				return b, nil
			}
			if err == nil {
				err = errors.New("empty")
			}
			return nil, err
		}
	}
}

// confine puts this thread (and what it execs) in a session of its own,
// opens the plan's objects, drops every capability, sets no_new_privs,
// restricts it with the plan's Landlock domain and installs the seccomp
// filter, in that order: the domain's objects are opened before anything
// changes, the filter (which need not allow Landlock's calls) comes last.
func confine(s *Spec) error {
	rfd, err := ruleset(s)
	if err != nil {
		return err
	}
	if rfd >= 0 {
		defer unix.Close(rfd)
	}
	timing.Mark("init", "ruleset")
	// A session of its own, without the caller's terminal unless the
	// launcher gave it the pty as controlling terminal (it then started
	// this process as a session leader already).
	if !s.weakened("new-session") {
		if sid, _ := unix.Getsid(0); sid != unix.Getpid() {
			if _, err := unix.Setsid(); err != nil {
				return fmt.Errorf("setsid: %w", err)
			}
		}
	}
	// A new anonymous session keyring: the launcher's session keyring and
	// the keys in it are no longer possessed, so keys whose permissions
	// give their possessor more than their user are out of reach (the
	// filter refuses the keyring calls besides). ENOSYS: no keyrings.
	if !s.weakened("session-keyring") {
		if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 && errno != unix.ENOSYS {
			return fmt.Errorf("join a new session keyring: %w", errno)
		}
	}
	if !s.weakened("cap-drop") {
		if err := dropCaps(); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if rfd >= 0 {
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
			return fmt.Errorf("landlock (ABI %d): restrict self: %w", s.Plan.ABI, errno)
		}
	}
	if !s.weakened("seccomp") {
		if s.Gate > 0 {
			return installGate(s)
		}
		return installFilter(s.Seccomp)
	}
	return nil
}

// installGate installs the seccomp program with a listener and sends the
// listener to the launcher, which decides the metadata calls from then
// on. Nothing after it may make such a call before the exec: the init
// would wait on itself.
func installGate(s *Spec) error {
	l, err := gate.Install(s.Seccomp)
	if err != nil {
		return fmt.Errorf("metadata gate (seccomp user notification, Linux 5.0 or later, and no other supervisor around cordon): %w", err)
	}
	err = gate.SendFd(s.Gate, l)
	unix.Close(l)
	unix.Close(s.Gate)
	return err
}

// rulesetAttr is struct landlock_ruleset_attr up to its scopes (ABI 6);
// older kernels accept it, its tail being zero.
type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// ruleset makes the plan's Landlock ruleset (-1 when the landlock step is
// weakened away). Each rule's object is opened without following any
// link on the way (openat2 RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS):
// the plan was made from what the launcher listed, and an object that
// became a link, or changed kind, since then is refused rather than
// granted; one that is gone gets no rule, which is stricter.
func ruleset(s *Spec) (int, error) { return rulesetOf(s, true) }

// rulesetOf is ruleset, with the rules on the inherited descriptors
// when inherited (the init's; a thread of the launcher has others).
func rulesetOf(s *Spec, inherited bool) (int, error) {
	p := s.Plan
	if p.ABI < MinABI {
		return -1, fmt.Errorf("landlock: ABI %d; the landlock backend needs ABI %d or later (Linux 6.2)", p.ABI, MinABI)
	}
	if s.weakened("landlock") {
		return -1, nil
	}
	attr := rulesetAttr{handledFS: p.HandledFS, handledNet: p.HandledNet, scoped: p.Scoped}
	if !s.Network && p.ABI >= 4 {
		// No rule grants either: no TCP bind or connect at all.
		attr.handledNet |= BindTCP | ConnectTCP
	}
	if p.ABI >= 6 {
		attr.scoped |= ScopeSignal | ScopeAbstractUnix
	}
	if p.ABI > 7 && ResolveUnixError() == nil {
		// No rule grants it: the sandbox reaches by name only the Unix
		// sockets made in its own domain, a wall beneath the gate,
		// which connects to them on its behalf (package gate).
		attr.handledFS |= ResolveUnix
	}
	// As much of the structure as the ABI knows.
	size := unsafe.Sizeof(attr)
	switch {
	case p.ABI < 4:
		size = unsafe.Offsetof(attr.handledNet)
	case p.ABI < 6:
		size = unsafe.Offsetof(attr.scoped)
	}
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return -1, fmt.Errorf("landlock (ABI %d): create ruleset: %w", p.ABI, errno)
	}
	rfd := int(r)
	for _, rule := range p.Rules {
		if err := addRule(rfd, rule, p.HandledFS, !s.weakened("check-paths")); err != nil {
			unix.Close(rfd)
			return -1, fmt.Errorf("landlock (ABI %d): %w", p.ABI, err)
		}
	}
	if err := proxyRule(rfd, s); err != nil {
		unix.Close(rfd)
		return -1, fmt.Errorf("landlock (ABI %d): %w", p.ABI, err)
	}
	if !inherited {
		return rfd, nil
	}
	if err := inheritedRules(rfd, s); err != nil {
		unix.Close(rfd)
		return -1, fmt.Errorf("landlock (ABI %d): %w", p.ABI, err)
	}
	return rfd, nil
}

// netPortAttr is struct landlock_net_port_attr, and ruleNetPort
// LANDLOCK_RULE_NET_PORT (linux/landlock.h; x/sys/unix has neither).
type netPortAttr struct{ access, port uint64 }

const ruleNetPort = 2

// proxyRule grants a TCP connect to the proxy's port (Spec.ProxyPort),
// where the ABI handles TCP (4 and later); before it the supervisor is
// the only wall.
func proxyRule(rfd int, s *Spec) error {
	if s.ProxyPort <= 0 || s.Network || s.Plan.ABI < 4 {
		return nil
	}
	if s.ProxyPort > 65535 {
		return fmt.Errorf("proxy port %d out of range", s.ProxyPort)
	}
	attr := netPortAttr{access: ConnectTCP, port: uint64(s.ProxyPort)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), ruleNetPort,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("rule on TCP port %d (the proxy): %w", s.ProxyPort, errno)
	}
	return nil
}

// inheritedRules grant, on each file the command inherits on 0-2 and the
// caller's descriptors (a pty cordon hands in, a log file of 2>log), the
// access its open mode already gives, on that inode only: reopening it
// (/dev/stderr, /proc/self/fd/1) then works as writing to it does, and
// gives nothing the descriptor did not. Directories get none (a rule on
// one would grant its whole tree), nor pipes and sockets, which Landlock
// does not restrict.
func inheritedRules(rfd int, s *Spec) error {
	for fd := 0; fd < 3+s.Files; fd++ {
		if slices.Contains(s.Closed, fd) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			continue
		}
		kind := st.Mode & unix.S_IFMT
		if kind != unix.S_IFREG && kind != unix.S_IFCHR && kind != unix.S_IFBLK {
			continue
		}
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil || fl&unix.O_PATH != 0 {
			continue
		}
		var a uint64
		switch fl & unix.O_ACCMODE {
		case unix.O_RDONLY:
			a = ReadFile
		case unix.O_WRONLY:
			a = WriteFile | Truncate
		case unix.O_RDWR:
			a = ReadFile | WriteFile | Truncate
		}
		if kind != unix.S_IFREG {
			a |= IoctlDev // a terminal's modes and size
		}
		if a &= s.Plan.HandledFS; a == 0 {
			continue
		}
		attr := unix.LandlockPathBeneathAttr{Allowed_access: a, Parent_fd: int32(fd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
		if errno != 0 && errno != unix.EBADFD {
			return fmt.Errorf("rule on inherited descriptor %d: %w", fd, errno)
		}
	}
	return nil
}

// addRule grants rule on its object, opened as described at ruleset.
func addRule(rfd int, rule Rule, handled uint64, check bool) error {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC}
	if check {
		how.Resolve = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, rule.Path, &how)
	if err == unix.ENOSYS && check {
		// Before Linux 5.6, or under a seccomp filter refusing openat2
		// (cordon's own, in a sandbox nested in another): the same walk,
		// one component at a time.
		fd, err = openNoLinks(rule.Path)
	}
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV):
		return fmt.Errorf("%s: a link is now on the way to it (%v); refusing to grant what it points to", rule.Path, err)
	case err != nil:
		return fmt.Errorf("open %s: %w", rule.Path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", rule.Path, err)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if check && isDir != rule.Dir {
		what := map[bool]string{true: "a directory", false: "not a directory"}
		return fmt.Errorf("%s: was %s when the plan was made, is %s now; refusing the launch", rule.Path, what[rule.Dir], what[isDir])
	}
	// The rights were decided for the object listed there: another one
	// renamed in since (a nested repository moved under the name of a
	// plain directory) would take them with it, wherever it goes next.
	// Refused rather than left without a rule, so that the domain stays
	// the plan the metadata gate decides by.
	if check && rule.Ino != 0 && (uint64(st.Dev) != rule.Dev || st.Ino != rule.Ino) {
		return fmt.Errorf("%s: not the object the plan was made for (device %d inode %d then, device %d inode %d now: renamed or replaced since it was listed); refusing the launch",
			rule.Path, rule.Dev, rule.Ino, uint64(st.Dev), st.Ino)
	}
	access := rule.Access & handled
	if !isDir {
		access &= FileRights
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("rule on %s: %w", rule.Path, errno)
	}
	return nil
}

// openNoLinks opens path (absolute, clean) O_PATH one component at a
// time from "/", failing with ELOOP where a component is a link.
func openNoLinks(path string) (int, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(strings.Trim(path, "/"), "/") {
		if name == "" {
			continue
		}
		if name == "." || name == ".." {
			unix.Close(fd)
			return -1, unix.EXDEV
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return -1, unix.ELOOP
		}
		fd = next
	}
	return fd, nil
}

// dropCaps empties every capability set of this thread: the bounding set
// (so that an exec of a set-user-ID root program or, as root, of anything
// cannot give any back), the ambient and inheritable sets, then the
// permitted and effective ones. Without CAP_SETPCAP (an ordinary user)
// the bounding set cannot be changed; nothing is permitted then anyway,
// and no_new_privs keeps an exec from adding to it.
func dropCaps() error {
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			if err == unix.EPERM && !havePermitted() {
				break
			}
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// havePermitted reports whether this thread has any permitted capability.
func havePermitted() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return true
	}
	return data[0].Permitted|data[1].Permitted != 0
}

// lastCap is the highest capability number of the running kernel.
func lastCap() int {
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		if n > 0 {
			return n
		}
	}
	return unix.CAP_LAST_CAP
}

// installFilter installs the seccomp program on this thread.
func installFilter(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if len(p)%8 != 0 {
		return errors.New("seccomp program: not a whole number of instructions")
	}
	prog := make([]unix.SockFilter, len(p)/8)
	for i := range prog {
		b := p[i*8:]
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
	return nil
}

// probeMain confines the init as a launch does, with s.Plan (which grants
// s.Probe/granted only), and proves the domain holds: the granted file
// reads, a file made beside it is refused with EACCES.
func probeMain(s *Spec) error {
	if err := confine(s); err != nil {
		return err
	}
	if _, err := os.ReadFile(s.Probe + "/granted"); err != nil {
		return fmt.Errorf("probe: reading a granted file failed under Landlock: %w", err)
	}
	f, err := os.OpenFile(s.Probe+"/denied", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
		return errors.New("probe: creating a file outside the grant succeeded: Landlock does not confine here")
	}
	if !errors.Is(err, unix.EACCES) {
		return fmt.Errorf("probe: creating a file outside the grant failed, but not with EACCES: %w", err)
	}
	return nil
}

// RestrictThread confines the calling thread, alone, by s's ruleset, as
// the sandbox is confined: no_new_privs and landlock_restrict_self on
// this thread only (neither is applied to the process's other threads).
// The caller must hold the thread (runtime.LockOSThread) and never give
// it back. The gate binds the sandbox's Unix sockets on such a thread,
// so that Landlock checks the name where the kernel resolves it.
func RestrictThread(s *Spec) error {
	rfd, err := rulesetOf(s, false)
	if err != nil {
		return err
	}
	if rfd < 0 {
		return errors.New("landlock: weakened away: no ruleset to restrict a thread with")
	}
	defer unix.Close(rfd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
		return fmt.Errorf("landlock (ABI %d): restrict a thread: %w", s.Plan.ABI, errno)
	}
	return nil
}
