package detect

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/native"
)

// kernelID names the running kernel and boot: a new kernel or a reboot
// can change what namespaces are allowed, so either invalidates the cache.
func kernelID() (release, boot string) {
	return readTrim("/proc/sys/kernel/osrelease"), readTrim("/proc/sys/kernel/random/boot_id")
}

// policyID joins everything else that decides whether bwrap may create
// its namespaces: the three sysctls, the AppArmor policy revision and the
// user namespace we run in (a container or outer sandbox has its own),
// and the seccomp filters this process runs under: a container sharing
// the host's user namespace (Docker's default) differs by its filter,
// which may refuse new user namespaces or Landlock's calls.
func policyID() string {
	ns, _ := os.Readlink("/proc/self/ns/user")
	return "userns_clone=" + readTrim("/proc/sys/kernel/unprivileged_userns_clone") +
		" max_user_namespaces=" + readTrim("/proc/sys/user/max_user_namespaces") +
		" apparmor_restrict=" + readTrim("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") +
		" apparmor_rev=" + readTrim("/sys/kernel/security/apparmor/revision") +
		" userns=" + ns + " " + seccompStatus()
}

// seccompStatus is this process's seccomp mode and filter count
// (/proc/self/status).
func seccompStatus() string {
	b, _ := os.ReadFile("/proc/self/status")
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Seccomp:") || strings.HasPrefix(line, "Seccomp_filters:") {
			out = append(out, strings.Join(strings.Fields(line), ""))
		}
	}
	return strings.Join(out, " ")
}

func osProductVersion() string { return "" }

// insideBwrap reports whether this process runs in a bwrap pid namespace,
// where bwrap itself is pid 1; a host's pid 1 is an init system.
var insideBwrap = func() bool {
	b, err := os.ReadFile("/proc/1/comm")
	return err == nil && strings.TrimSpace(string(b)) == "bwrap" && cordonMarked()
}

// insideNative reports whether this process runs in a sandbox of the
// native backend, whose pid 1 is cordon's init (package native); nothing
// inside can rename it, as only a process itself may set its name.
var insideNative = func() bool {
	b, err := os.ReadFile("/proc/1/comm")
	return err == nil && strings.TrimSpace(string(b)) == native.InitName && cordonMarked()
}

// insideLandlock reports whether this process runs in a sandbox of the
// landlock backend, which has no pid 1 or mount of its own to show: its
// init set no_new_privs and a seccomp filter, and the Landlock domain
// refuses to list cordon's state directory (denied in every sandbox),
// though this process's user owns it and may list it by its mode: only
// a security module refuses that, and a variable set on the host does
// not make one.
var insideLandlock = func() bool {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil || !hasStatus(string(st), "NoNewPrivs:", "1") || !hasStatus(string(st), "Seccomp:", "2") {
		return false
	}
	sd := state.Path()
	var fi unix.Stat_t
	if unix.Stat(sd, &fi) != nil || fi.Mode&unix.S_IFMT != unix.S_IFDIR ||
		int(fi.Uid) != os.Geteuid() || fi.Mode&0o500 != 0o500 {
		return false
	}
	fd, err := unix.Open(sd, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return false
	}
	return err == unix.EACCES
}

// hasStatus reports whether /proc/self/status text has field with value.
func hasStatus(status, field, value string) bool {
	for _, line := range strings.Split(status, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == field {
			return f[1] == value
		}
	}
	return false
}

// cordonMarked reports whether cordon's state directory is masked here as
// every sandbox cordon launches masks it (launcher: the state directory is
// denied whatever the policy): a mount at its path whose source lies among
// cordon's masks. pid 1's name alone does not say whose sandbox this is:
// bubblewrap is pid 1 in every sandbox made with it (Flatpak's, other
// tools'), which may confine far less than the policy asks.
func cordonMarked() bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	sd := state.Path()
	alt, _ := filepath.EvalSymlinks(sd)
	return maskedIn(string(b), sd, alt)
}

// maskedIn reports whether mountinfo has a mount at dir (or alt) whose
// root, the directory bound there, is one of cordon's masks.
func maskedIn(mountinfo, dir, alt string) bool {
	marker := "/" + state.Run + "/masks/"
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		root, at := unescapeMount(f[3]), unescapeMount(f[4])
		if (at == dir || alt != "" && at == alt) && strings.Contains(root, marker) {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
