package guards

import (
	"path/filepath"
	"slices"
	"strings"
)

// privileged commands run something as another user.
var privileged = map[string]bool{
	"sudo": true, "sudoedit": true, "doas": true, "su": true, "pkexec": true, "run0": true,
	"runuser": true,
}

// stoppers stop the machine, whatever their operands.
var stoppers = map[string]bool{"shutdown": true, "reboot": true, "halt": true, "poweroff": true}

// machine denies the commands that act on the machine rather than on files:
// privilege escalation, stopping the machine, creating a filesystem, and dd
// onto a device.
func (c *classifier) machine(name string, args []word, via string) {
	if why, ok := machineByName(name, args); ok {
		c.deny(name, via, "%s", why)
		return
	}
	switch name {
	case "wipefs":
		c.wipefs(args, via)
	case "init", "telinit":
		c.runlevel(name, args, via)
	case "systemctl", "loginctl":
		c.systemctl(name, args, via)
	case "dd", "tee", "shred", "cp", "install":
		c.deviceWrite(name, args, via)
	}
}

// machineByName is why the command name denies itself, whatever its
// operands: it escalates privileges, stops the machine, or erases a device.
func machineByName(name string, args []word) (why string, denied bool) {
	switch {
	case privileged[name]:
		return name + " runs commands with another user's privileges", true
	case name == "systemd-run" && !slices.ContainsFunc(args, func(a word) bool { return a.val == "--user" }):
		return "systemd-run without --user runs commands through the system manager, as root unless told otherwise", true
	case stoppers[name]:
		return name + " stops the machine", true
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs" || name == "mkswap":
		return name + " creates a filesystem, erasing the device", true
	case name == "blkdiscard":
		return "blkdiscard discards every block of the device", true
	}
	return "", false
}

// wipefs denies erasing signatures (--all, --offset, -a, -o in a cluster).
func (c *classifier) wipefs(args []word, via string) {
	for _, a := range args {
		if a.val == "--all" || a.val == "--offset" || strings.HasPrefix(a.val, "--offset=") ||
			!strings.HasPrefix(a.val, "--") && strings.HasPrefix(a.val, "-") && strings.ContainsAny(a.val, "ao") {
			c.deny("wipefs", via, "wipefs %s erases filesystem signatures", a.val)
			return
		}
	}
}

// runlevel denies init and telinit taking the machine to runlevel 0 or 6.
func (c *classifier) runlevel(name string, args []word, via string) {
	for _, a := range args {
		if a.val == "0" || a.val == "6" {
			c.deny(name, via, "%s %s stops the machine", name, a.val)
			return
		}
	}
}

// deviceWrite denies dd, tee, shred, cp and install writing to a device
// or /proc/sysrq-trigger (rawTarget).
func (c *classifier) deviceWrite(name string, args []word, via string) {
	switch name {
	case "dd":
		for _, a := range args {
			if dst, ok := strings.CutPrefix(a.val, "of="); ok && a.static {
				if what, raw := rawTarget(dst); raw {
					c.deny(name, via, "dd writes to %s", what)
					return
				}
			}
		}
	case "tee", "shred":
		for _, a := range args {
			if what, raw := rawTarget(a.val); raw && a.static {
				c.deny(name, via, "%s writes to %s", name, what)
				return
			}
		}
	case "cp", "install":
		// The destination is the last operand (or -t DIR, a directory).
		if n := len(args); n > 1 && args[n-1].static {
			if what, raw := rawTarget(args[n-1].val); raw {
				c.deny(name, via, "%s writes to %s", name, what)
			}
		}
	}
}

// stopVerbs stop the machine or take it down to a rescue shell as
// systemctl verbs; with start, isolate and the like, their targets do.
var stopVerbs = map[string]bool{
	"poweroff": true, "reboot": true, "halt": true, "kexec": true, "soft-reboot": true,
	"rescue": true, "emergency": true,
}

var startVerbs = map[string]bool{
	"start": true, "restart": true, "try-restart": true, "reload-or-restart": true,
	"try-reload-or-restart": true, "isolate": true,
}

// systemctlArgOpts are the options of systemctl and loginctl that take a
// separate value, so the verb is found after them.
var systemctlArgOpts = []string{"-t", "--type", "-p", "--property", "-s", "--signal", "-n",
	"--lines", "-o", "--output", "-H", "--host", "-M", "--machine", "--root", "--image",
	"--state", "--kill-whom", "--kill-value", "--job-mode", "--when", "--what", "--message",
	"--reboot-argument", "--boot-loader-entry", "--boot-loader-menu", "--timestamp",
	"--preset-mode", "--drop-in", "--check-inhibitors"}

// systemctl denies a verb that stops the machine (systemctl reboot,
// loginctl poweroff) and starting or isolating a target that does
// (systemctl isolate poweroff.target, systemctl start reboot.target).
func (c *classifier) systemctl(name string, args []word, via string) {
	var operands []string
	for i := 0; i < len(args); i++ {
		switch v := args[i].val; {
		case slices.Contains(systemctlArgOpts, v):
			i++
		case strings.HasPrefix(v, "-"):
		default:
			operands = append(operands, v)
		}
	}
	if len(operands) == 0 {
		return
	}
	verb := operands[0]
	if stopVerbs[verb] {
		c.deny(name, via, "%s %s stops the machine", name, verb)
		return
	}
	if name != "systemctl" || !startVerbs[verb] {
		return
	}
	for _, unit := range operands[1:] {
		if stopVerbs[strings.TrimSuffix(unit, ".target")] || unit == "ctrl-alt-del.target" {
			c.deny(name, via, "systemctl %s %s stops the machine", verb, unit)
			return
		}
	}
}

// rawTarget reports a path whose writing wipes a disk or stops the
// machine: a device (see isDevice) or /proc/sysrq-trigger, also spelled
// through a process's root (/proc/self/root/dev/sda); what names it for a
// reason.
func rawTarget(p string) (what string, raw bool) {
	clean := filepath.Clean(p)
	for {
		rest, ok := strings.CutPrefix(clean, "/proc/")
		if !ok {
			break
		}
		pid, after, _ := strings.Cut(rest, "/")
		root, ok := strings.CutPrefix(after, "root")
		if !ok || root != "" && root[0] != '/' || pid != "self" && pid != "thread-self" && descriptor(pid) < 0 {
			break
		}
		clean = filepath.Clean("/" + root)
	}
	switch {
	case clean == "/proc/sysrq-trigger":
		return "/proc/sysrq-trigger, which can reboot or halt the machine", true
	case isDevice(clean):
		return "device " + clean, true
	}
	return "", false
}

// isDevice reports a path under /dev other than the harmless character
// devices and descriptors a command may legitimately write to.
func isDevice(p string) bool {
	p = filepath.Clean(p)
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
		"/dev/tty", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/ptmx":
		return false
	}
	for _, safe := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/tcp/", "/dev/udp/", "/dev/mqueue/"} {
		if strings.HasPrefix(p, safe) {
			return false
		}
	}
	return true
}
