package conformance

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attacks on kernel objects shared with the host (class 13): keyrings and
// socket families.

// keyrings are the special keyring ids a process can name.
var keyrings = []struct {
	name string
	id   int
}{
	{"session", unix.KEY_SPEC_SESSION_KEYRING},
	{"user", unix.KEY_SPEC_USER_KEYRING},
	{"user-session", unix.KEY_SPEC_USER_SESSION_KEYRING},
	{"process", unix.KEY_SPEC_PROCESS_KEYRING},
	{"thread", unix.KEY_SPEC_THREAD_KEYRING},
}

func init() {
	attacks["keyring"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 2 || a[0] != "read" && a[0] != "plant" {
			return usage(errw, "keyring read|plant DESCRIPTION")
		}
		if a[0] == "plant" {
			keyringPlant(a[1], out, errw)
		} else {
			keyringRead(a[1], out, errw)
		}
		return 0
	}
	attacks["socket"] = func(a []string, out, errw io.Writer) int {
		// socket FAMILY[/PROTOCOL]...: create each with every common type;
		// @@SOCKET@@ for each that the kernel created.
		for _, s := range a {
			fs, ps, _ := strings.Cut(s, "/")
			fam, err1 := strconv.Atoi(fs)
			proto, err2 := strconv.Atoi(ps)
			if err1 != nil || ps != "" && err2 != nil {
				return usage(errw, "socket FAMILY[/PROTOCOL]...")
			}
			for _, typ := range []int{unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_SEQPACKET, unix.SOCK_RAW} {
				fd, err := unix.Socket(fam, typ|unix.SOCK_CLOEXEC, proto)
				if err != nil {
					fmt.Fprintf(errw, "socket(%d, %d, %d): %v\n", fam, typ, proto, err)
					continue
				}
				unix.Close(fd)
				fmt.Fprintf(out, "socket(%d, %d, %d) created\n", fam, typ, proto)
				mark(out, "SOCKET")
				break
			}
		}
		return 0
	}
	attacks["kernel-calls"] = func(a []string, out, errw io.Writer) int {
		// The calls refused outright besides the keyrings: a BPF map, a
		// userfaultfd (user-mode faults need no privilege), the kernel log.
		attr := make([]byte, 128) // union bpf_attr for BPF_MAP_CREATE: an array of 1 u32
		binary.LittleEndian.PutUint32(attr[0:], 2)
		binary.LittleEndian.PutUint32(attr[4:], 4)
		binary.LittleEndian.PutUint32(attr[8:], 4)
		binary.LittleEndian.PutUint32(attr[12:], 1)
		if fd, _, e := unix.Syscall(unix.SYS_BPF, 0, uintptr(unsafe.Pointer(&attr[0])), uintptr(len(attr))); e != 0 {
			fmt.Fprintln(errw, "bpf(BPF_MAP_CREATE):", e)
		} else {
			unix.Close(int(fd))
			mark(out, "BPF")
		}
		const uffdUserModeOnly = 1
		if fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly, 0, 0); e != 0 {
			fmt.Fprintln(errw, "userfaultfd(UFFD_USER_MODE_ONLY):", e)
		} else {
			unix.Close(int(fd))
			mark(out, "USERFAULTFD")
		}
		buf := make([]byte, 1<<16)
		if n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf); err != nil {
			fmt.Fprintln(errw, "syslog(SYSLOG_ACTION_READ_ALL):", err)
		} else {
			fmt.Fprintf(out, "read %d bytes of the kernel log\n", n)
			mark(out, "SYSLOG")
		}
		return 0
	}
	attacks["vsock"] = func(a []string, out, errw io.Writer) int {
		// A vsock stream to the hypervisor host (CID 2): a reset or a
		// refusal is the host's answer, so the channel is open.
		fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintln(errw, "socket(AF_VSOCK):", err)
			return 0
		}
		defer unix.Close(fd)
		mark(out, "VSOCK")
		tv := unix.NsecToTimeval(int64(2 * time.Second))
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
		err = unix.Connect(fd, &unix.SockaddrVM{CID: unix.VMADDR_CID_HOST, Port: 22})
		fmt.Fprintf(out, "connect to the hypervisor host (CID 2, port 22): %v\n", err)
		return 0
	}
}

// keyringRead prints every key the process can reach, with its payload:
// the special keyrings walked recursively, the keys /proc/keys lists, and
// a search by description as a library would make.
func keyringRead(desc string, out, errw io.Writer) {
	seen := map[int]bool{}
	var walk func(id int)
	walk = func(id int) {
		if seen[id] {
			return
		}
		seen[id] = true
		d, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, id)
		if err != nil {
			fmt.Fprintf(errw, "describe %d: %v\n", id, err)
			return
		}
		fmt.Fprintf(out, "key %d: %s\n", id, d)
		buf := make([]byte, 64<<10)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if err != nil {
			fmt.Fprintf(errw, "read %d: %v\n", id, err)
			return
		}
		mark(out, "KEYREAD")
		buf = buf[:min(n, len(buf))]
		if !strings.HasPrefix(d, "keyring;") {
			fmt.Fprintf(out, "payload %d: %q\n", id, buf)
			return
		}
		for i := 0; i+4 <= len(buf); i += 4 {
			walk(int(int32(binary.LittleEndian.Uint32(buf[i:]))))
		}
	}
	for _, r := range keyrings {
		id, err := unix.KeyctlGetKeyringID(r.id, false)
		if err != nil {
			fmt.Fprintf(errw, "%s keyring: %v\n", r.name, err)
			continue
		}
		fmt.Fprintf(out, "%s keyring: %d\n", r.name, id)
		walk(id)
	}
	// request_key with no callout: a search of the process's keyrings that
	// never asks /sbin/request-key to make the key.
	tp, _ := unix.BytePtrFromString("user")
	dp, _ := unix.BytePtrFromString(desc)
	r, _, e := unix.Syscall6(unix.SYS_REQUEST_KEY, uintptr(unsafe.Pointer(tp)), uintptr(unsafe.Pointer(dp)), 0, 0, 0, 0)
	if e != 0 {
		fmt.Fprintf(errw, "request_key(user, %s): %v\n", desc, e)
	} else {
		walk(int(r))
	}
	if b, err := os.ReadFile("/proc/keys"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) == 0 {
				continue
			}
			if id, err := strconv.ParseInt(f[0], 16, 64); err == nil {
				walk(int(id))
			}
		}
	}
}

// keyringPlant adds a key to every keyring a later process of the host
// might share: the session keyring it inherited, the user keyrings.
func keyringPlant(desc string, out, errw io.Writer) {
	for _, r := range keyrings[:3] {
		id, err := unix.AddKey("user", desc, []byte("planted by the sandbox"), r.id)
		if err != nil {
			fmt.Fprintf(errw, "add_key to the %s keyring: %v\n", r.name, err)
			continue
		}
		fmt.Fprintf(out, "planted key %d in the %s keyring\n", id, r.name)
		mark(out, "PLANTED")
	}
}
