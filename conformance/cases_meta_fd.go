package conformance

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// Extended attributes of a denied file through a descriptor. open(2)
// with access mode 3 asks read and write permission of the file's mode
// but gives a descriptor with neither; Landlock's open check asks only
// for what a descriptor reads or writes, so under the landlock backend it
// let such an open through on a denied file, and fgetxattr and flistxattr
// (which the metadata gate leaves to the kernel) read the file's
// attributes. Judged by what came out of the sandbox.
func metaFdCases() []Case {
	return []Case{
		{Name: "meta-read-denied-fd", Class: Direct, Summary: "open a denied file with access mode 3 (no read, no write) and read its extended attributes through the descriptor",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.deniedDir(&p, "ws/private")
				if err := unix.Setxattr(d+"/id", "user.secret", []byte(h.Secret), 0); err != nil {
					h.NotApplicable("this file system has no user extended attributes: %v", err)
				}
				if err := unix.Setxattr(d+"/id", "user."+h.Secret, []byte("1"), 0); err != nil {
					h.Fatalf("fixture: %v", err)
				}
				o := h.Sandbox(p, `"$ATTACK" __attack fdxattr "$D/id" user.secret`, "D="+d)
				h.NoSecret(o)
				h.Refuse(o, "OPENED")
			}},
	}
}

func init() {
	attacks["fdxattr"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 2 {
			return usage(errw, "fdxattr PATH NAME")
		}
		fd, err := unix.Open(a[0], unix.O_RDWR|unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintln(errw, "open with access mode 3:", a[0], err)
			return 1
		}
		defer unix.Close(fd)
		mark(out, "OPENED")
		b := make([]byte, 4096)
		if n, err := unix.Fgetxattr(fd, a[1], b); err != nil {
			fmt.Fprintln(errw, "fgetxattr:", a[0], err)
		} else {
			fmt.Fprintf(out, "%s=%s\n", a[1], b[:n])
		}
		if n, err := unix.Flistxattr(fd, b); err != nil {
			fmt.Fprintln(errw, "flistxattr:", a[0], err)
		} else {
			fmt.Fprintf(out, "names of %s: %q\n", a[0], b[:n])
		}
		return 0
	}
}
