package conformance

import (
	"fmt"
	"os"
	"strings"
)

// Class 16, the boundary: what the launching process hands the sandbox on
// its descriptors 0-2. A directory or an O_PATH handle opens the host
// beneath it through /proc/self/fd/N/..., whatever the mounts say; a pidfd
// signals a host process from any pid namespace; the user's terminal can
// be read while the user types elsewhere, and left changed after the run.
// cordon refuses the first kinds (exit 125, naming the descriptor) and
// never hands in the terminal itself. ExtraFiles, which only the launcher
// API has, are covered by the launcher's Go tests.
func boundaryFdCases() []Case {
	var cs []Case
	names := []string{"stdin", "stdout", "stderr"}
	for fd := 0; fd < 3; fd++ {
		cs = append(cs, handleCase(fmt.Sprintf("boundary-fd-opath-dir-%s", names[fd]),
			fmt.Sprintf("an O_PATH handle of a directory above a denied one on %s: read the denied file and write outside the workspace through /proc/self/fd/%d/...", names[fd], fd),
			fd, func(h *H) (*os.File, error) { return openPath(h.Dir) }))
	}
	cs = append(cs,
		handleCase("boundary-fd-dir-stdin", "a directory on stdin (cordon run ... < /): read a denied file and write outside the workspace through /proc/self/fd/0/...",
			0, func(h *H) (*os.File, error) { return os.Open(h.Dir) }),
		handleCase("boundary-fd-opath-file-stdin", "an O_PATH handle of a denied file on stdin: reopen it through /proc/self/fd/0 and read it",
			0, func(h *H) (*os.File, error) { return openPath(h.Path("outside/private/id")) }),
		Case{Name: "boundary-fd-reopen-file-stdin", Class: Boundary, Backends: linuxOnly,
			Summary: "a file outside the writable roots, opened read-only, on stdin (cordon run ... < ~/.bashrc): reopen /proc/self/fd/0 for writing and rewrite it",
			Run: func(h *H) {
				ws, p := h.ws()
				h.Mkdir("ws/out")
				rc := h.Write("outside/rc", "original\n")
				f, err := os.Open(rc)
				if err != nil {
					h.Fatalf("fixture: %v", err)
				}
				defer f.Close()
				// (Only a regular file: reopened, a pipe's other end
				// would be this same stream.)
				o := h.Launch(Launch{Policy: p, Dir: ws, Stdio: [3]*os.File{f},
					Argv:      sandboxScript(`exec 7<&0; test -f /proc/self/fd/7 && ( echo pwned > /proc/self/fd/7 ) 2>/dev/null && ok REOPENED; cat <&7 > out/seen`),
					Refusable: "stdin is"})
				h.Want("outside/rc", "original\n")
				if o.Code != 125 {
					// The data still arrives.
					if got, _ := h.Read("ws/out/seen"); !strings.HasPrefix(got, "original\n") {
						h.Errorf("the command did not read what was on its stdin: %q\n%s", got, o)
					}
				}
			}},
		Case{Name: "boundary-fd-owned-readonly-stdin", Class: Boundary, Backends: linuxOnly,
			Summary: "a read-only key of the user's own on stdin (ssh-add - < key): change its mode and times through /proc/self/fd/0, no reopen needed, then write it",
			Run: func(h *H) {
				ws, p := h.ws()
				key := h.WriteMode("outside/id.pem", h.Secret+"\n", 0o400)
				before, err := os.Stat(key)
				if err != nil {
					h.Fatalf("fixture: %v", err)
				}
				f, err := os.Open(key)
				if err != nil {
					h.Fatalf("fixture: %v", err)
				}
				defer f.Close()
				o := h.Launch(Launch{Policy: p, Dir: ws, Stdio: [3]*os.File{f},
					Argv:      sandboxScript(`chmod 666 /proc/self/fd/0 2>/dev/null; touch -d 2001-01-01 /proc/self/fd/0 2>/dev/null; ( echo pwned >> /proc/self/fd/0 ) 2>/dev/null; cat > /dev/null`),
					Refusable: "stdin is"})
				after, err := os.Stat(key)
				if err != nil {
					h.Fatalf("stat %s: %v", key, err)
				}
				if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
					h.Errorf("the sandbox changed the host's file through its stdin: mode %v -> %v, mtime %v -> %v\n%s",
						before.Mode(), after.Mode(), before.ModTime(), after.ModTime(), o)
				}
				h.Want("outside/id.pem", h.Secret+"\n")
			}},
		Case{Name: "boundary-fd-reopen-file-stdout", Class: Boundary, Backends: linuxOnly,
			Summary: "stdout appended to a file in a denied directory (cordon run ... >> private/log): reopen /proc/self/fd/1 for reading and copy what the file held",
			Run: func(h *H) {
				ws, p := h.ws()
				h.deniedDir(&p, "outside/private")
				log := h.Write("outside/private/log", h.Secret+"\n")
				f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					h.Fatalf("fixture: %v", err)
				}
				defer f.Close()
				l := Launch{Policy: p, Dir: ws, Argv: []string{"/bin/sh", "-c", `exec 7>&1; test -f /proc/self/fd/7 && cat /proc/self/fd/7 > stolen 2>/dev/null; echo appended; : > ran`}}
				l.Stdio[1] = f
				o := h.Launch(l)
				if got, _ := h.Read("ws/stolen"); strings.Contains(got, h.Secret) {
					h.Errorf("the sandbox read the denied file its stdout was appended to:\n%s", o)
				}
				if o.Code != 125 {
					h.Want("outside/private/log", h.Secret+"\nappended\n")
				}
			}},
		Case{Name: "boundary-fd-pidfd-stdin", Class: Boundary, Backends: linuxOnly,
			Summary: "a pidfd of a host process on stdin: kill that process from inside (pidfd_send_signal reaches across pid namespaces)",
			Run: func(h *H) {
				_, p := h.ws()
				victim := h.HostProcess(".", "exec sleep 600")
				f, err := openPidfd(victim.Pid)
				if err != nil {
					h.NotApplicable("%v", err)
				}
				defer f.Close()
				o := h.Launch(Launch{Policy: p, Dir: p.Workspace, Stdio: [3]*os.File{f},
					Argv: sandboxScript(`"$ATTACK" __attack pidfd-signal 0`), Refusable: "stdin is a pidfd"})
				if !victim.Alive() {
					h.Errorf("the host process was killed from inside the sandbox:\n%s", o)
				}
				h.Refuse(o, "KILLED")
			}},
	)
	for fd := 0; fd < 3; fd++ {
		cs = append(cs, terminalAloneCase(fd))
	}
	return cs
}

// handleCase hands the launching process a handle (open) on descriptor
// fd, and the sandbox tries the host through it: copy the denied secret
// into the workspace, plant a file beside the workspace. Judged by the
// host: either cordon refused the launch naming the descriptor, or the
// script ran and got nothing.
func handleCase(name, summary string, fd int, open func(h *H) (*os.File, error)) Case {
	return Case{Name: name, Class: Boundary, Backends: linuxOnly, Summary: summary, Run: func(h *H) {
		ws, p := h.ws()
		h.deniedDir(&p, "outside/private")
		f, err := open(h)
		if err != nil {
			h.NotApplicable("%v", err)
		}
		defer f.Close()
		l := Launch{Policy: p, Dir: ws}
		l.Stdio[fd] = f
		// Through a copy on 7: a command's redirections replace the
		// shell's descriptors 1 and 2 while it runs.
		// Not the usual prologue: with stdout or stderr taken, markers
		// cannot come out; the host's files say what happened.
		l.Argv = []string{"/bin/sh", "-c", fmt.Sprintf("exec 7<&%d\n", fd) + `d=/proc/self/fd/7
cat "$d/outside/private/id" > stolen 2>/dev/null
cat "$d" >> stolen 2>/dev/null
cat "$d/outside/private/id" 2>/dev/null
echo pwn > "$d/outside/planted" 2>/dev/null
: > ran`}
		o := h.Launch(l)
		h.NoSecret(o)
		if got, _ := h.Read("ws/stolen"); strings.Contains(got, h.Secret) {
			h.Errorf("the sandbox copied the denied secret through descriptor %d:\n%s", fd, o)
		}
		h.Absent("outside/planted")
		name := []string{"stdin", "stdout", "stderr"}[fd]
		switch {
		case o.Code == 125:
			if fd != 2 && !strings.Contains(o.Stderr, name+" is ") {
				h.Errorf("cordon refused the launch without naming %s:\n%s", name, o)
			}
		case !h.Exists("ws/ran"):
			h.Errorf("the script did not run, and cordon did not refuse the launch (exit 125):\n%s", o)
		}
	}}
}

// terminalModes are the modes the terminal cases switch on through the
// descriptor, each with what switches it off.
var terminalModes = [][2]string{
	{"\x1b[?1049h", "\x1b[?1049l"}, // alternate screen
	{"\x1b[?25l", "\x1b[?25h"},     // hidden cursor
	{"\x1b[?1000h", "\x1b[?1000l"}, // mouse reporting
	{"\x1b[?2004h", "\x1b[?2004l"}, // bracketed paste
}

// terminalAloneCase puts the user's terminal (a pty of the harness's, as a
// terminal emulator sets one up, the launching process's controlling
// terminal) on descriptor fd alone, the others being /dev/null and pipes,
// as a harness or a script calls cordon (cordon run ... </dev/null >log
// leaves stderr on the terminal). The sandbox changes the terminal's modes
// through fd, switches on screen modes with escape sequences, notes which
// device it holds, and, on stderr, reads what the user typed ahead. Judged
// on the user's terminal: its modes as before, every screen mode switched
// off again at the end, a device other than the user's, and the keystrokes
// still waiting for the user's shell.
func terminalAloneCase(fd int) Case {
	name := []string{"stdin", "stdout", "stderr"}[fd]
	const keys = "keys\n"
	return Case{Name: "boundary-tty-" + name + "-alone", Class: Boundary, Backends: linuxOnly,
		Summary: "the user's terminal on " + name + " alone: change its modes (stty -echo), switch on the alternate screen, a hidden cursor, mouse reporting and bracketed paste, and read keystrokes typed ahead; after the run the terminal is as it was",
		Run: func(h *H) {
			_, p := h.ws()
			pty, err := OpenTerminal()
			if err != nil {
				h.NotApplicable("%v", err)
			}
			defer pty.Close()
			before, err := pty.State()
			if err != nil {
				h.Fatalf("pty: %v", err)
			}
			// (Through a copy on 7: a command's redirections replace the
			// shell's descriptors 1 and 2 while it runs.)
			script := fmt.Sprintf(`exec 7<&%d
stat -L -c %%t:%%T /proc/self/fd/7 > rdev 2>/dev/null
stty -echo -icanon <&7 2>/dev/null
printf '`, fd)
			for _, m := range terminalModes {
				script += strings.ReplaceAll(m[0], "\x1b", `\033`)
			}
			script += "' >&7\n"
			if fd == 2 {
				// Typed ahead by the user, for the shell that runs next.
				if _, err := pty.Master.Write([]byte(keys)); err != nil {
					h.Fatalf("pty: %v", err)
				}
				script += "dd bs=1 count=5 of=stolen <&7 2>/dev/null\n"
			}
			script += ": > ran\n"
			// In a directory of the workspace: under landlock nothing is
			// made directly in the workspace (it holds protected names),
			// and what the script leaves here is what the case judges.
			l := Launch{Policy: p, Dir: h.Mkdir("ws/out"), Argv: []string{"/bin/sh", "-c", script}}
			l.Stdio[fd] = pty.Slave
			o := h.Launch(l)
			sent := drainMaster(pty.Master)
			if !h.Exists("ws/out/ran") {
				h.Fatalf("the script did not run:\n%s", o)
			}
			after, err := pty.State()
			if err != nil {
				h.Fatalf("pty: %v", err)
			}
			if after != before {
				h.Errorf("the user's terminal changed:\nbefore: %s\nafter:  %s\n%s", before, after, o)
			}
			for _, m := range terminalModes {
				if on := strings.LastIndex(sent, m[0]); on >= 0 && strings.LastIndex(sent, m[1]) < on {
					h.Errorf("the user's terminal was left with %q on (nothing sent %q after it):\n%q\n%s", m[0], m[1], sent, o)
				}
			}
			if got, _ := h.Read("ws/out/rdev"); strings.TrimSpace(got) == ttyRdev(pty.Slave) {
				h.Errorf("the sandbox held the user's terminal itself (device %s) on %s:\n%s", strings.TrimSpace(got), name, o)
			}
			if fd == 2 {
				if got, _ := h.Read("ws/out/stolen"); got != "" {
					h.Errorf("the sandbox read %q the user typed ahead, from the user's terminal:\n%s", got, o)
				}
				if n, err := pty.Pending(); err != nil || n != len(keys) {
					h.Errorf("of the %d bytes typed ahead, %d are left for the user's shell (%v):\n%s", len(keys), n, err, o)
				}
			}
			pty.Flush()
		}}
}
