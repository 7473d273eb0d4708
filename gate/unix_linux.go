package gate

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// MaxOwnSockets bounds the record of the sockets the sandbox bound by
// name and are alive: past it, binding another fails with ENOBUFS.
const MaxOwnSockets = 1024

// sunPathMax is sizeof(sockaddr_un.sun_path).
const sunPathMax = 108

// unixState is what the gate knows of the sandbox's own Unix sockets.
type unixState struct {
	own  []ownSocket
	diag int // a NETLINK_SOCK_DIAG socket, opened at the first bind; -1: none yet
	seq  uint32
	buf  [1024]byte
	// binds go to the confined thread (ThreadRestricter), started at
	// the first bind; done carries each answer back.
	binds chan bindReq
	done  chan unix.Errno
}

// bindReq is one bind for the confined thread: the caller's socket,
// working directory and umask, and the supervisor's copy of the address.
type bindReq struct {
	sock, cwd, umask int
	addr             []byte
}

// ownSocket is a socket the sandbox bound by name in this launch: the
// socket (its inode on sockfs and its cookie, which the kernel never
// gives twice) and the inode it is bound to, or, for an autobind, the
// abstract name the kernel picked (sun_path, its leading NUL included).
type ownSocket struct {
	sino     uint32
	cookie   uint64
	dev, ino uint32
	abstract string
}

func (u *unixState) close() {
	if u.diag >= 0 {
		unix.Close(u.diag)
	}
	if u.binds != nil {
		close(u.binds)
	}
}

// confinedBind binds on the thread r confines, started at the first
// call; that thread has a file-system context of its own (its working
// directory and umask are the caller's for the moment of the bind), no
// capabilities, and ends with Serve.
func (u *unixState) confinedBind(r ThreadRestricter, q bindReq) unix.Errno {
	if u.binds == nil {
		binds, ready := make(chan bindReq), make(chan error)
		go confinedThread(r, binds, ready, u.done)
		if err := <-ready; err != nil {
			return unix.EACCES
		}
		u.binds = binds
	}
	u.binds <- q
	return <-u.done
}

func confinedThread(r ThreadRestricter, binds <-chan bindReq, ready chan<- error, done chan<- unix.Errno) {
	runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
	err := unix.Unshare(unix.CLONE_FS)
	if err == nil {
		err = r.RestrictThread()
	}
	if err == nil {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var none [2]unix.CapUserData
		err = unix.Capset(&hdr, &none[0])
	}
	ready <- err
	if err != nil {
		return
	}
	for q := range binds {
		unix.Umask(q.umask)
		if q.cwd >= 0 {
			if err := unix.Fchdir(q.cwd); err != nil {
				done <- errnoOf(err)
				continue
			}
		}
		done <- rawBind(q.sock, q.addr)
	}
}

// bind decides bind(2). The supervisor binds every socket itself, from
// its own copy of the address, so that no address the sandbox rewrites
// in its memory, and no descriptor it swaps, changes what is bound: a
// pathname Unix socket where the model lets the sandbox make the name
// (recorded, so that connect reaches it), autobind, netlink's, and a TCP
// socket on the loopback (bindInet); abstract names and other IP
// addresses are refused (EACCES; Landlock refuses every TCP bind the
// sandbox would make itself).
func (g *gate) bind() (int64, unix.Errno, bool) {
	var buf [sockaddrMax]byte
	s, e, ok := g.takeSock(buf[:])
	defer s.close()
	if e != 0 || !ok {
		return 0, e, ok
	}
	if e := g.ownThread(); e != 0 {
		return 0, e, true
	}
	if e := g.dropCaps(); e != 0 {
		return 0, e, true
	}
	defer g.restoreCaps()
	switch s.dom {
	case unix.AF_UNIX:
		return 0, g.bindUnix(&s), true
	case unix.AF_NETLINK:
		// The filter makes NETLINK_ROUTE sockets only, whose groups the
		// kernel lets anyone join; the launcher's capabilities are off.
		return 0, rawBind(s.sock, s.addr), true
	}
	if hostNetwork(g.d) {
		return 0, rawBind(s.sock, s.addr), true // the host's network, as asked
	}
	return 0, g.bindInet(&s), true // inet_linux.go
}

// listen decides listen(2) where the filter would refuse it for TCP
// (ConnectRules, UnixRules): the caller's socket, taken, listens when it
// is a Unix socket (the supervisor's listen is on that very socket, so
// a descriptor swapped meanwhile changes nothing), and when it is a TCP
// socket on the loopback (listenTCP); a TCP socket listening on the
// host's network is refused (EACCES).
func (g *gate) listen() (int64, unix.Errno, bool) {
	fd := int32(g.n.args[0])
	if fd < 0 {
		return 0, unix.EBADF, true
	}
	pidfd, err := pidfdOpen(int(g.n.pid))
	if err != nil {
		return 0, unix.EPERM, g.valid()
	}
	sock, err := unix.PidfdGetfd(pidfd, int(fd), 0)
	unix.Close(pidfd)
	if err != nil {
		return 0, errnoOf(err), g.valid()
	}
	defer unix.Close(sock)
	if !g.valid() {
		return 0, 0, false
	}
	dom, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return 0, errnoOf(err), true
	}
	if dom == unix.AF_INET || dom == unix.AF_INET6 {
		return 0, g.listenTCP(sock, dom), true // inet_linux.go
	}
	if dom != unix.AF_UNIX {
		return 0, unix.EACCES, true
	}
	return 0, errnoOrZero(unix.Listen(sock, int(int32(g.n.args[1])))), true
}

// unixName reads a sockaddr_un as the kernel does (unix_validate_addr,
// unix_mkname_bsd): the name ends at its first NUL or at the length.
// autobind: the address is the family alone; abstract: a name that
// begins with NUL.
func unixName(addr []byte) (name string, autobind, abstract bool, e unix.Errno) {
	if len(addr) < 2 || len(addr) > 2+sunPathMax {
		return "", false, false, unix.EINVAL
	}
	if int(addr[0])|int(addr[1])<<8 != unix.AF_UNIX {
		return "", false, false, unix.EINVAL
	}
	p := addr[2:]
	switch {
	case len(p) == 0:
		return "", true, false, 0
	case p[0] == 0:
		return "", false, true, 0
	}
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return string(p), false, false, 0
}

// bindUnix binds a Unix socket: by name in the directory it resolves in
// the sandbox's view (without the launcher's capabilities, with the
// caller's umask), then records the inode the socket is bound to, as the
// kernel reports it for that socket (so a name renamed meanwhile cannot
// make the gate record another inode).
func (g *gate) bindUnix(s *sockCall) unix.Errno {
	name, autobind, abstract, e := unixName(s.addr)
	switch {
	case e != 0:
		return e
	case autobind:
		// A name the kernel picks, recorded: the sandbox may connect
		// to it (connectAbstract).
		if e := g.socks.room(); e != 0 {
			return e
		}
		if e := rawBind(s.sock, s.addr); e != 0 {
			return e
		}
		g.socks.recordAbstract(s.sock)
		return 0
	case abstract:
		return unix.EACCES
	}
	ed, ok := g.d.(EntryDecider)
	if !ok {
		return unix.EACCES
	}
	ed = g.withMadeDirs(ed)
	base := s.cwd
	if strings.HasPrefix(name, "/") {
		base = s.root
	}
	n, e := g.find(base, name, g.link[:])
	if e != 0 {
		return e
	}
	defer n.close()
	if n.special || n.slash {
		return unix.EACCES
	}
	var st unix.Stat_t
	if unix.Fstatat(n.dir, n.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return unix.EADDRINUSE
	}
	if e := g.socks.room(); e != 0 {
		return e
	}
	if r, ok := g.d.(ThreadRestricter); ok && ed.KernelAllows(n.path, NeedEntry) {
		// The kernel's wall lets the sandbox make names here: the
		// confined thread binds the caller's own name, which that wall
		// checks again where the kernel resolves it (and never allows
		// what the model refuses).
		if e := g.socks.confinedBind(r, bindReq{sock: s.sock, cwd: s.cwd, umask: s.umask, addr: s.addr}); e != 0 {
			return e
		}
		g.socks.record(s.sock)
		return 0
	}
	if ed.Private(n.dirPath) {
		return g.bindPrivate(s, n) // tmp_linux.go
	}
	if !ed.MayEntry(n.path) {
		return unix.EACCES
	}
	unix.Umask(s.umask)
	g.acting(n.path)
	if e := bindIn(s.sock, n.dir, n.name); e != 0 {
		return e
	}
	g.socks.record(s.sock)
	return 0
}

// record notes the inode the socket sock, just bound, is bound to, as
// the kernel reports it for that socket: a name renamed meanwhile
// cannot make the gate record another inode. The bind stands even when
// the record fails (a connect to it is then refused).
func (u *unixState) record(sock int) {
	var st unix.Stat_t
	if err := unix.Fstat(sock, &st); err != nil {
		return
	}
	cookie, err := unix.GetsockoptUint64(sock, unix.SOL_SOCKET, unix.SO_COOKIE)
	if err != nil {
		return
	}
	o := ownSocket{sino: uint32(st.Ino), cookie: cookie}
	var bound bool
	if o.dev, o.ino, bound, _ = u.boundInode(o.sino, o.cookie); bound {
		u.own = append(u.own, o)
	}
}

// recordAbstract notes the abstract name the kernel gave sock (autobind).
func (u *unixState) recordAbstract(sock int) {
	var st unix.Stat_t
	if err := unix.Fstat(sock, &st); err != nil {
		return
	}
	cookie, err := unix.GetsockoptUint64(sock, unix.SOL_SOCKET, unix.SO_COOKIE)
	if err != nil {
		return
	}
	sa, err := unix.Getsockname(sock)
	un, ok := sa.(*unix.SockaddrUnix)
	if err != nil || !ok || !strings.HasPrefix(un.Name, "@") {
		return
	}
	// x/sys writes the leading NUL as "@"; an autobind name has no other.
	u.own = append(u.own, ownSocket{sino: uint32(st.Ino), cookie: cookie, abstract: "\x00" + un.Name[1:]})
}

// bindIn binds sock to name in the directory dir: from dir as this
// thread's working directory (its own, ownThread), so that the address
// the socket keeps, which getsockname and the peers' getpeername report,
// is the name itself rather than a path through /proc.
func bindIn(sock, dir int, name string) unix.Errno {
	here, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(here)
	if err := unix.Fchdir(dir); err != nil {
		return errnoOf(err)
	}
	defer unix.Fchdir(here)
	return errnoOrZero(unix.Bind(sock, &unix.SockaddrUnix{Name: name}))
}

// room makes room in the record for one more socket, forgetting those
// that are closed; ENOBUFS when every one is alive.
func (u *unixState) room() unix.Errno {
	if len(u.own) < MaxOwnSockets {
		return 0
	}
	u.own = slices.DeleteFunc(u.own, func(o ownSocket) bool {
		_, _, _, alive := u.boundInode(o.sino, o.cookie)
		return !alive
	})
	if len(u.own) >= MaxOwnSockets {
		return unix.ENOBUFS
	}
	return 0
}

// connectUnix connects a Unix socket to a name: resolved in the
// sandbox's view (links followed as the kernel follows them, no magic
// link, without the launcher's capabilities), pinned (O_PATH), allowed
// only when the pinned inode is one a socket of this sandbox is bound
// to and that socket is still alive, or a host socket the user handed
// over (HostSockets), and connected through the pin, so
// that the inode checked is the inode connected. Anything else is
// EACCES, what the kernel answers for a socket file the caller may not
// write; abstract names too.
func (g *gate) connectUnix(s *sockCall) unix.Errno {
	name, autobind, abstract, e := unixName(s.addr)
	switch {
	case e != 0:
		return e
	case autobind:
		return unix.EINVAL
	case abstract:
		return g.connectAbstract(s)
	}
	if e := g.ownThread(); e != 0 {
		return e
	}
	if e := g.dropCaps(); e != 0 {
		return e
	}
	defer g.restoreCaps()
	base := s.cwd
	if strings.HasPrefix(name, "/") {
		base = s.root
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_IN_ROOT}
	switch {
	case g.own:
		base, name = s.root, s.abs
	case base == s.cwd:
		// Relative: beneath the working directory, but ".." may climb
		// out of it, as the kernel lets it, to the sandbox's root.
		how.Resolve = unix.RESOLVE_NO_MAGICLINKS
	}
	pin, err := unix.Openat2(base, name, &how)
	if err != nil {
		if err == unix.ELOOP {
			return unix.EACCES // through /proc/self/fd/N: not followed here
		}
		return errnoOf(err)
	}
	defer unix.Close(pin)
	var st unix.Stat_t
	if err := unix.Fstat(pin, &st); err != nil {
		return errnoOf(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return unix.ECONNREFUSED
	}
	// No /proc check is needed: /proc holds no socket files, and the
	// inode must be one this sandbox bound.
	own := g.socks.isOwn
	switch {
	case g.own && hostNetwork(g.d):
		own = func(uint32, uint32) bool { return false } // the namespace is the host's
	case g.own:
		own = g.socks.boundHere
	}
	if !own(kdev(st.Dev), uint32(st.Ino)) && !hostSocket(g.d, st.Dev, st.Ino) {
		return unix.EACCES
	}
	if testhook.GateUnixConnect != nil {
		testhook.GateUnixConnect(int(g.n.pid), name)
	}
	return connectPinned(s.sock, "/proc/self/fd/"+strconv.Itoa(pin))
}

// connectAbstract connects a Unix socket to an abstract name, from the
// supervisor's copy of the address. In a network namespace of the
// sandbox's own (native, bwrap), every abstract name is the sandbox's:
// the socket, made there, finds the name there. In the host's
// (landlock), only a name the kernel picked for one of the sandbox's own
// sockets (autobind, recorded) is reachable, and only while that socket
// lives: a live socket keeps its name and no other can take it, so a
// socket alive before and after the connect is the one connected; a
// connect that raced its close is shut down both ways and refused.
// Landlock's abstract-socket scope is the second wall: the sandbox's
// own connect reaches no socket made outside its domain.
func (g *gate) connectAbstract(s *sockCall) unix.Errno {
	connect := func() unix.Errno { return rawConnect(s.sock, s.addr) }
	if g.own && hostNetwork(g.d) {
		return unix.EACCES // the host's abstract names
	}
	if g.own {
		return connectBounded(s.sock, connect)
	}
	name := string(s.addr[2:])
	i := slices.IndexFunc(g.socks.own, func(o ownSocket) bool { return o.abstract == name })
	if i < 0 {
		return unix.EACCES
	}
	o := g.socks.own[i]
	if _, _, _, alive := g.socks.boundInode(o.sino, o.cookie); !alive {
		return unix.ECONNREFUSED
	}
	e := connectBounded(s.sock, connect)
	if _, _, _, alive := g.socks.boundInode(o.sino, o.cookie); !alive {
		unix.Shutdown(s.sock, unix.SHUT_RDWR)
		return unix.EACCES
	}
	return e
}

// isOwn says whether the inode dev, ino (its low 32 bits) is the one a
// live socket of the sandbox is bound to; a record whose socket is gone
// is forgotten. The caller holds the inode pinned, so while the socket
// lives the inode cannot be freed and given to another.
func (u *unixState) isOwn(dev, ino uint32) bool {
	for i := 0; i < len(u.own); i++ {
		o := u.own[i]
		if o.abstract != "" || o.dev != dev || o.ino != ino {
			continue
		}
		d, n, bound, alive := u.boundInode(o.sino, o.cookie)
		if bound && d == dev && n == ino {
			return true
		}
		if !alive {
			u.own = append(u.own[:i], u.own[i+1:]...)
			i--
		}
	}
	return false
}

// kdev is a stat's device number as the kernel keeps it (MKDEV: the
// major number above 20 bits), which the socket diagnostics report.
func kdev(dev uint64) uint32 { return unix.Major(dev)<<20 | unix.Minor(dev) }

// connectPinned connects sock to the socket file at path (the pin's
// magic link). A blocking caller waits as the kernel makes it wait for
// room in the listener's queue, at most connectWait: the supervisor
// serves one call at a time.
func connectPinned(sock int, path string) unix.Errno {
	sa := &unix.SockaddrUnix{Name: path}
	return connectBounded(sock, func() unix.Errno { return errnoOrZero(unix.Connect(sock, sa)) })
}

// connectBounded runs connect, the supervisor's connect of sock, for a
// blocking caller at most connectWait.
func connectBounded(sock int, connect func() unix.Errno) unix.Errno {
	fl, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0)
	if err != nil {
		return errnoOf(err)
	}
	if fl&unix.O_NONBLOCK != 0 {
		return connect()
	}
	// The timeout is the open socket's, which the caller shares; it is
	// bounded only for the moment of the connect, while the caller
	// waits in it.
	old, err := unix.GetsockoptTimeval(sock, unix.SOL_SOCKET, unix.SO_SNDTIMEO)
	if err != nil {
		return errnoOf(err)
	}
	bound := unix.NsecToTimeval(int64(connectWait / time.Nanosecond))
	if old.Sec == 0 && old.Usec == 0 || old.Sec > bound.Sec {
		if err := unix.SetsockoptTimeval(sock, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &bound); err != nil {
			return errnoOf(err)
		}
		defer unix.SetsockoptTimeval(sock, unix.SOL_SOCKET, unix.SO_SNDTIMEO, old)
	}
	return connect()
}

// connectNetlink connects a netlink socket from the supervisor's copy
// of the address: to the kernel only (port 0, no groups), as an
// unprivileged caller of NETLINK_ROUTE may.
func connectNetlink(s *sockCall) unix.Errno {
	if len(s.addr) >= 2 && int(s.addr[0])|int(s.addr[1])<<8 == unix.AF_UNSPEC {
		return rawConnect(s.sock, s.addr)
	}
	if len(s.addr) < 12 {
		return unix.EINVAL
	}
	for _, b := range s.addr[4:12] {
		if b != 0 {
			return unix.EPERM
		}
	}
	return rawConnect(s.sock, s.addr)
}

// hostSocket says whether d admits the inode dev, ino as a host socket
// handed over.
func hostSocket(d Decider, dev, ino uint64) bool {
	h, ok := d.(HostSockets)
	return ok && h.HostSocket(dev, ino)
}

// hostNetwork says whether d's sandbox is on the host's network with
// host sockets handed over (HostNetwork).
func hostNetwork(d Decider) bool {
	h, ok := d.(HostNetwork)
	return ok && h.HostNetwork()
}
