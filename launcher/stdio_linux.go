package launcher

import (
	"fmt"

	"golang.org/x/sys/unix"
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
