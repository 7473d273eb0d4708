package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/policy"
)

// Filesystem magics of descriptors that are handles on something of the
// host rather than data (linux/magic.h).
const (
	nsfsMagic      = 0x6e736673 // /proc/PID/ns/*: setns into a namespace of the host
	pidfsMagic     = 0x50494446 // a pidfd: signals, pidfd_getfd on a host process
	anonInodeMagic = 0x09041934 // eventfd, epoll, inotify, fanotify, signalfd, timerfd, io_uring, bpf, userfaultfd, ...
)

// fdKind says what descriptor fd is, and whether the sandbox must not be
// given it (see checkDescriptors).
func fdKind(fd int) (kind string, refuse bool, err error) {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return "", false, fmt.Errorf("fcntl F_GETFL: %w", err)
	}
	if fl&unix.O_PATH != 0 {
		// Reopened through /proc/self/fd/N, or used with openat, it
		// reaches the file, or everything beneath the directory, with
		// whatever access the user has there.
		return "an O_PATH handle", true, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", false, fmt.Errorf("fstat: %w", err)
	}
	var sf unix.Statfs_t
	if err := unix.Fstatfs(fd, &sf); err != nil {
		return "", false, fmt.Errorf("fstatfs: %w", err)
	}
	switch uint32(sf.Type) {
	case nsfsMagic:
		return "a namespace handle", true, nil
	case pidfsMagic:
		return "a pidfd", true, nil
	case anonInodeMagic:
		return "an anonymous-inode descriptor (an event, a watch, a pidfd...)", true, nil
	}
	return fdKindFromStat(fd, &st)
}

// dataDevice reports whether st is one of the memory devices that only
// carry data: /dev/null, zero, full, random and urandom (1:3, 1:5, 1:7,
// 1:8, 1:9). /dev/mem, /dev/kmsg, /dev/kvm, /dev/fuse, input, sound and
// the rest give the sandbox a device of the host.
func dataDevice(st *unix.Stat_t) bool {
	if unix.Major(st.Rdev) != 1 {
		return false
	}
	switch unix.Minor(st.Rdev) {
	case 3, 5, 7, 8, 9:
		return true
	}
	return false
}

// reopenGain says what reopening regular file f through /proc/self/fd
// would give the sandbox beyond f's own access mode that policy canon
// does not: "for writing" or "for reading"; "" for nothing (f is not a
// regular file, or the policy allows that access where it lies, or the
// file's permissions refuse it). A file whose name the kernel no longer
// knows (deleted, or beyond this process's root) counts as reachable.
func reopenGain(f *os.File, canon *policy.Canonical) string {
	fd := int(f.Fd())
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ""
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return ""
	}
	proc := "/proc/self/fd/" + strconv.Itoa(fd)
	p, err := os.Readlink(proc)
	known := err == nil && filepath.IsAbs(p) && !strings.HasSuffix(p, " (deleted)")
	can := func(mode uint32, op policy.Op) bool {
		if known && canon.Access(p, op) {
			return false // the sandbox may do that there anyway
		}
		return unix.Faccessat(unix.AT_FDCWD, proc, mode, unix.AT_EACCESS) == nil
	}
	switch fl & unix.O_ACCMODE {
	case unix.O_RDONLY:
		if can(unix.W_OK, policy.Write) {
			return "for writing"
		}
	case unix.O_WRONLY:
		if can(unix.R_OK, policy.Read) {
			return "for reading"
		}
	}
	// Whatever the open mode, the file's owner changes its mode and times
	// through the descriptor (fchmod, or chmod of /proc/self/fd/N), no
	// reopen needed: 'chmod 666 /proc/self/fd/0 < ~/.ssh/id.pem' then
	// lets anyone on the host read or write the key. The sandbox's user
	// is the launcher's.
	if int(st.Uid) == os.Geteuid() && !(known && canon.Access(p, policy.Write)) {
		return "to change its mode (the sandbox's user owns it)"
	}
	return ""
}
