package conformance

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Class 8: other processes — /proc/<pid>/root|cwd|fd of processes outside,
// signals, ptrace.
func processCases() []Case {
	// host starts a process outside the sandbox, as the case's user, with
	// the secret in its argv and environment, its cwd in a denied
	// directory and a descriptor on a denied file.
	host := func(h *H) (*HostProc, Policy) {
		_, p := h.ws()
		h.deniedDir(&p, "outside/private")
		hp := h.HostProcess("outside/private", `exec 7<id; while :; do sleep 1; done`, "host-"+h.Secret)
		return hp, p
	}
	return []Case{
		{Name: "proc-host-root-cwd-fd", Class: 8, Summary: "read a host process's root, cwd, fds, cmdline and environ through /proc/<pid>",
			Run: func(h *H) {
				hp, p := host(h)
				script := `P=/proc/$HPID; ls -l $P/ && ok VISIBLE; cat $P/root$FIX/outside/private/id $P/cwd/id $P/fd/7 $P/cmdline $P/environ; ls -l $P/cwd/ $P/fd/`
				if h.Backend() == "landlock" {
					// No pid namespace: the host's processes are listed and
					// their command lines are world-readable (proc(5)), as
					// docs/threat-model.md states; what Landlock's ptrace
					// scope refuses (root, cwd, fds, environ) must stay so.
					script = strings.Replace(script, " $P/cmdline", "", 1)
				}
				o := h.Sandbox(p, script, "HPID="+strconv.Itoa(hp.Pid))
				h.NoSecret(o)
				if h.Backend() != "landlock" {
					h.Refuse(o, "VISIBLE")
				}
			}},
		{Name: "proc-scan-all", Class: 8, Summary: "scan every /proc/<pid> visible inside for the secret (cmdline, environ, cwd, root, fds)",
			Run: func(h *H) {
				_, p := host(h)
				script := `for P in /proc/[0-9]*; do cat $P/cmdline $P/environ $P/cwd/id $P/root$FIX/outside/private/id 2>/dev/null; for f in $P/fd/*; do [ -f "$f" ] && cat "$f"; done 2>/dev/null; done | tr '\0' '\n'; ls /proc | grep -c '^[0-9]'`
				if h.Backend() == "landlock" {
					// As in proc-host-root-cwd-fd: command lines are the
					// stated exception without a pid namespace.
					script = strings.Replace(script, "cat $P/cmdline $P/environ", "cat $P/environ", 1)
				}
				o := h.Sandbox(p, script)
				h.NoSecret(o)
			}},
		{Name: "proc-1-root", Class: 8, Summary: "read a denied file through /proc/1/root, /proc/1/cwd and the parent's /proc entries",
			Run: func(h *H) {
				_, p := h.ws()
				h.deniedDir(&p, "outside/private")
				o := h.Sandbox(p, `cat /proc/1/root$FIX/outside/private/id /proc/1/cwd/../outside/private/id; cat /proc/$PPID/root$FIX/outside/private/id; ls /proc/1/root$FIX/outside/private && ok LISTED`)
				h.NoSecret(o)
				h.Refuse(o, "LISTED")
			}},
		{Name: "proc-signal-host", Class: 8, Summary: "kill and stop a host process of the same user by pid and process group",
			Run: func(h *H) {
				hp, p := host(h)
				o := h.Sandbox(p, `kill -STOP $HPID && ok STOP; kill -9 $HPID && ok KILL; kill -9 -- -$HPID && ok KILLPG`, "HPID="+strconv.Itoa(hp.Pid))
				h.Refuse(o, "STOP", "KILL", "KILLPG")
				if !hp.Alive() {
					h.Errorf("host process %d was killed or stopped from inside the sandbox", hp.Pid)
				}
			}},
		{Name: "proc-unix-socket-host", Class: 8, Summary: "connect to a host process's Unix socket reachable through a read-only mount (cordon __attack connect)",
			Run: func(h *H) {
				_, p := h.ws()
				sock := h.Path("outside/agent.sock")
				h.Mkdir("outside")
				got := h.Listen(sock)
				o := h.Sandbox(p, `"$ATTACK" __attack connect "$S"`, "S="+sock)
				h.Refuse(o, "CONNECTED")
				if n := got(); n > 0 {
					h.Errorf("the host socket accepted %d connection(s) from inside the sandbox", n)
				}
			}},
		{Name: "proc-host-shm", Class: 8, Backends: linuxOnly, Summary: "read and plant files in the host's /dev/shm (shared memory of processes outside)",
			Run: func(h *H) {
				_, p := h.ws()
				name := "/dev/shm/" + h.Secret[len(h.Secret)-16:]
				if err := os.WriteFile(name, []byte(h.Secret), 0o666); err != nil {
					h.NotApplicable("host /dev/shm: %v", err)
				}
				os.Chmod(name, 0o666)
				h.Cleanup(func() { os.Remove(name); os.Remove(name + ".planted") })
				o := h.Sandbox(p, `cat /dev/shm/*; echo x > "$N.planted" && ok PLANT`, "N="+name)
				h.NoSecret(o)
				if exists(name + ".planted") {
					h.Errorf("host: %s.planted was created from inside", name)
				}
			}},
		{Name: "proc-outlive-launch", Class: 8, Backends: linuxOnly, Summary: "leave writers behind that ignore hang-ups and terminations (one in the background, one in a session of its own) and exit: after the launch returns, nothing of the sandbox may still write to the workspace",
			Run: func(h *H) {
				_, p := h.ws()
				// The writers write in a directory of the workspace: under
				// landlock nothing is made directly in the workspace.
				ws := h.Mkdir("ws/out")
				// Bounded (about 10 s), so that a weakened sandbox (the
				// mutation check) leaves nothing running for long.
				// Each opens its file once, before the launch returns: an
				// open that makes a name after it would meet the entry
				// gate gone (ENOSYS) under native and bwrap, and the case
				// would no longer show the pid namespace's part.
				o := h.Sandbox(p, `(trap '' HUP TERM INT; exec 3>>"$W/alive"; i=0; while [ $i -lt 4000 ]; do echo x >&3; sleep 0.002; i=$((i+1)); done) >/dev/null 2>&1 &
setsid sh -c 'trap "" HUP TERM INT; exec 3>>"$0/alive2"; i=0; while [ $i -lt 4000 ]; do echo y >&3; sleep 0.002; i=$((i+1)); done' "$W" >/dev/null 2>&1 &
n=0; while [ ! -s "$W/alive" ] || [ ! -s "$W/alive2" ]; do n=$((n+1)); [ $n -gt 3000 ] && break; sleep 0.01; done
[ -s "$W/alive" ] && [ -s "$W/alive2" ] && ok STARTED`, "W="+ws)
				h.Expect(o, "STARTED")
				size := func() (n int64) {
					for _, f := range []string{"ws/out/alive", "ws/out/alive2"} {
						if fi, err := os.Stat(h.Path(f)); err == nil {
							n += fi.Size()
						}
					}
					return n
				}
				before := size()
				time.Sleep(300 * time.Millisecond)
				if after := size(); after != before {
					h.Errorf("host: a process of the sandbox still wrote after the launch returned (ws/alive and ws/alive2 grew from %d to %d bytes)", before, after)
				}
			}},
		{Name: "proc-ptrace-host", Class: 8, Backends: linuxOnly, Summary: "PTRACE_ATTACH and PTRACE_SEIZE a host process of the same user (cordon __attack ptrace)",
			Run: func(h *H) {
				hp, p := host(h)
				o := h.Sandbox(p, `"$ATTACK" __attack ptrace $HPID`, "HPID="+strconv.Itoa(hp.Pid))
				h.Refuse(o, "PTRACE")
				if !hp.Alive() {
					h.Errorf("host process %d was stopped or killed", hp.Pid)
				}
			}},
	}
}
