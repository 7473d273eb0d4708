package conformance

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attacks on the landlock backend's wall and on read leases (issue 39):
// the kernel objects and inode changes no Landlock right covers.

// The inode ioctls that change a file through a read-only descriptor
// (linux/fs.h, ext4.h; the same on x86_64 and aarch64).
const (
	fsIocGetversion   = 0x80087601
	fsIocSetversion   = 0x40087602
	ext4IocSetversion = 0x40086604
)

func init() {
	attacks["lease"] = func(a []string, out, errw io.Writer) int {
		// lease FILE READY GO: take a read lease on FILE (opened read-only)
		// and say on the FIFO READY whether it held, then wait on the FIFO
		// GO with the descriptor (and any lease) still open.
		if len(a) != 3 {
			return usage(errw, "lease FILE READY GO")
		}
		f, err := os.Open(a[0])
		if err != nil {
			fmt.Fprintln(errw, "open:", err)
			return 1
		}
		defer f.Close()
		said := "REFUSED"
		if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
			fmt.Fprintln(errw, "F_SETLEASE:", err)
		} else {
			said = "LEASED"
			mark(out, "LEASED")
		}
		// The ordinary locks beside it stay: an OFD lock, and reading.
		lk := unix.Flock_t{Type: unix.F_RDLCK}
		if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err == nil {
			mark(out, "LOCKED")
		} else {
			fmt.Fprintln(errw, "F_OFD_SETLK:", err)
		}
		if err := os.WriteFile(a[1], []byte(said+"\n"), 0); err != nil {
			fmt.Fprintln(errw, "ready:", err)
			return 1
		}
		if _, err := os.ReadFile(a[2]); err != nil {
			fmt.Fprintln(errw, "go:", err)
		}
		return 0
	}
	attacks["setversion"] = func(a []string, out, errw io.Writer) int {
		// setversion FILE: rewrite FILE's inode generation through a
		// read-only descriptor; @@SETVERSION@@ for each ioctl that did.
		if len(a) != 1 {
			return usage(errw, "setversion FILE")
		}
		f, err := os.Open(a[0])
		if err != nil {
			fmt.Fprintln(errw, "open:", err)
			return 1
		}
		defer f.Close()
		var old int64
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocGetversion, uintptr(unsafe.Pointer(&old))); e == 0 {
			mark(out, "GETVERSION")
		}
		for _, req := range []uintptr{fsIocSetversion, ext4IocSetversion} {
			v := old ^ 0x5a5a
			if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), req, uintptr(unsafe.Pointer(&v))); e != 0 {
				fmt.Fprintf(errw, "ioctl %#x: %v\n", req, e)
				continue
			}
			mark(out, "SETVERSION")
		}
		return 0
	}
	attacks["mqueue"] = func(a []string, out, errw io.Writer) int {
		// mqueue HOSTNAME OWNNAME: remove the host's queue, make one.
		if len(a) != 2 {
			return usage(errw, "mqueue HOSTNAME OWNNAME")
		}
		if err := mqUnlink(a[0]); err == nil {
			mark(out, "UNLINKED")
		} else {
			fmt.Fprintln(errw, "mq_unlink:", err)
		}
		if fd, err := mqOpen(a[1], unix.O_CREAT|unix.O_RDWR); err == nil {
			unix.Close(fd)
			mark(out, "CREATED")
		} else {
			fmt.Fprintln(errw, "mq_open:", err)
		}
		return 0
	}
	attacks["listmount"] = func(a []string, out, errw io.Writer) int {
		// listmount: list the mounts of this mount namespace by id, the
		// call that names another namespace by its id as easily.
		req := struct{ size, spare, mntID, param, mntNsID uint64 }{size: 32, mntID: 0xffffffff} // LSMT_ROOT
		ids := make([]uint64, 64)
		n, _, e := unix.Syscall6(unix.SYS_LISTMOUNT, uintptr(unsafe.Pointer(&req)), uintptr(unsafe.Pointer(&ids[0])), uintptr(len(ids)), 0, 0, 0)
		if e != 0 {
			fmt.Fprintln(errw, "listmount:", e)
		} else {
			fmt.Fprintln(out, "listmount:", int(n), "mounts")
			mark(out, "LISTMOUNT")
		}
		sm := make([]byte, 4096)
		_, _, e = unix.Syscall6(unix.SYS_STATMOUNT, uintptr(unsafe.Pointer(&req)), uintptr(unsafe.Pointer(&sm[0])), uintptr(len(sm)), 0, 0, 0)
		if e != unix.ENOSYS {
			mark(out, "STATMOUNT") // any answer but "no such call": the kernel took it
		}
		return 0
	}
}

// mqOpen and mqUnlink are mq_open(3) and mq_unlink(3) by name ("/q"):
// the system calls take it without its slash, as the C library passes it.
func mqOpen(name string, flags int) (int, error) {
	p, err := unix.BytePtrFromString(strings.TrimPrefix(name, "/"))
	if err != nil {
		return -1, err
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), uintptr(flags), 0o600, 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func mqUnlink(name string) error {
	p, err := unix.BytePtrFromString(strings.TrimPrefix(name, "/"))
	if err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0); e != 0 {
		return e
	}
	return nil
}

// inodeVersion is the host's view of path's inode generation and ctime.
func inodeVersion(path string) (gen int64, ctime unix.Timespec, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, ctime, err
	}
	defer f.Close()
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocGetversion, uintptr(unsafe.Pointer(&gen))); e != 0 {
		return 0, ctime, e
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, ctime, err
	}
	return gen, st.Ctim, nil
}

// openWriteNow opens path for writing without waiting: EWOULDBLOCK is a
// lease that would have held the host's open back.
func openWriteNow(path string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}
