package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// TestTerminalAnswersTmux is judged by the user's shell, in tmux (with
// set-clipboard on and a paste buffer): a sandbox fills the screen with
// ESC # 8 (so that tmux answers late), asks for the device attributes
// (primary and secondary), the cursor position and the status, and the
// clipboard (OSC 52), and exits. After cordon returns, the shell's line
// holds only what the user types next, with a pty and with --no-tty, as
// root and as a normal user; and the work beside it: a program inside
// asks for the cursor position and the device attributes and reads the
// answers while it runs.
func TestTerminalAnswersTmux(t *testing.T) {
	testenv.RequireBackend(t, testenv.NativeBackend())
	tmux, err := exec.LookPath("tmux")
	testenv.Need(t, "tmux (apt-get install tmux; test.sh installs it as root)", err)
	bin := cordonBinary(t)
	dir, err := os.MkdirTemp("", "cordon-tmux-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	attack := filepath.Join(dir, "attack.sh")
	require.NoError(t, os.WriteFile(attack, []byte(`#!/bin/sh
s=''; i=0
while [ $i -lt 1000 ]; do s="$s"'\033#8\033#8\033#8\033#8\033#8\033#8\033#8\033#8\033#8\033#8\033#8'; i=$((i+1)); done
printf "$s"
printf '\033[c\033[>c\033[6n\033[5n'
printf '\033]52;c;?\007'
printf '\033]5'; printf '2;c;'; printf '?\033\\'
`), 0o755))
	own := filepath.Join(dir, "own.sh")
	require.NoError(t, os.WriteFile(own, []byte(`#!/bin/bash
printf '\033[6n'; IFS= read -r -s -d R a; printf 'CPR[%s]\n' "${a#?}"
printf '\033[c'; IFS= read -r -s -d c a; printf 'DA[%s]\n' "${a#?}"
`), 0o755))
	for _, u := range users(t) {
		for _, flag := range []string{"", "--no-tty"} {
			name := u.Name + "/pty"
			if flag != "" {
				name = u.Name + "/no-tty"
			}
			t.Run(name, func(t *testing.T) {
				s := newTmuxShell(t, tmux, u, dir)
				line := s.after(bin+" run --backend "+testenv.NativeBackend()+" "+flag+" -- "+attack, true)
				require.Equal(t, "P> END", line, "the shell's line after cordon returned")
				require.NotContains(t, s.screen(), "U0VDUkVU", "the paste buffer reached the screen")
				if flag == "" {
					s.after(bin+" run --backend "+testenv.NativeBackend()+" -- "+own, false)
					sc := s.screen()
					require.Regexp(t, `CPR\[\[\d+;\d+\]`, sc, "the program's own cursor position query")
					require.Regexp(t, `DA\[\[\?[\d;]+\]`, sc, "the program's own DA1 query")
				}
			})
		}
	}
}

// tmuxShell is a tmux server of its own with one bash, as user u.
type tmuxShell struct {
	t    *testing.T
	tmux string
	sock string
	u    User
	n    int
}

func newTmuxShell(t *testing.T, tmux string, u User, dir string) *tmuxShell {
	// A home of the user's own, which holds the server's socket.
	home, err := os.MkdirTemp(dir, "home-")
	require.NoError(t, err)
	require.NoError(t, os.Chown(home, u.Uid, u.Gid))
	s := &tmuxShell{t: t, tmux: tmux, sock: filepath.Join(home, "tmux"), u: u}
	shell := "env -i PATH=/usr/bin:/bin HOME=" + home + " TERM=xterm PS1='P> ' bash --norc --noprofile -i"
	s.run("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40", shell)
	t.Cleanup(func() { s.run("kill-server") })
	s.run("set", "-g", "set-clipboard", "on")
	s.run("set-buffer", "SECRET-PASTE")
	s.wait("P>")
	return s
}

func (s *tmuxShell) run(args ...string) string {
	cmd := exec.Command(s.tmux, append([]string{"-S", s.sock}, args...)...)
	// tmux runs the session's command with $SHELL -c, or else with the
	// account's login shell, which for the suite's own user is nologin:
	// CI's environment has no SHELL, and the session ended at once.
	cmd.Env = append(os.Environ(), "SHELL=/bin/sh")
	if !s.u.Invoker {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.u.Uid), Gid: uint32(s.u.Gid), Groups: []uint32{}}}
	}
	out, err := cmd.CombinedOutput()
	if args[0] != "kill-server" {
		require.NoError(s.t, err, "tmux %v: %s", args, out)
	}
	return string(out)
}

func (s *tmuxShell) screen() string { return s.run("capture-pane", "-p") }

// wait returns the screen once its last line that is not empty ends
// with want; a shell that never gets there fails the test (after a
// minute: a hang, not a verdict).
func (s *tmuxShell) wait(want string) string {
	end := time.Now().Add(time.Minute)
	for {
		sc := s.screen()
		if l := lastLine(sc); strings.HasSuffix(l, want) {
			return sc
		}
		if time.Now().After(end) {
			s.t.Fatalf("the shell never showed %q:\n%s", want, sc)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// after runs command line cmd in the shell, then clears the screen and
// prints a mark (clear: after clearing the screen): once the mark is on the screen, tmux has taken all the
// sandbox's output, and so has typed every answer it gives. Then the user
// types END; the shell's line, once END is on it, is returned.
func (s *tmuxShell) after(cmd string, clear bool) string {
	s.n++
	mark := fmt.Sprintf("MARK%d", s.n)
	cls := "\\n"
	if clear {
		cls = "\\033[2J\\033[H"
	}
	s.run("send-keys", "-l", cmd+"; printf '"+cls+"%s\\n' "+strings.Join(strings.Split(mark, ""), "''"))
	s.run("send-keys", "Enter")
	s.waitMark(mark)
	s.run("send-keys", "-l", "END")
	line := lastLine(s.wait("END"))
	s.run("send-keys", "C-u") // the line is the user's again, empty
	s.wait("P>")
	return line
}

func (s *tmuxShell) waitMark(mark string) {
	end := time.Now().Add(time.Minute)
	for !strings.Contains("\n"+s.screen(), "\n"+mark+"\n") {
		if time.Now().After(end) {
			s.t.Fatalf("the command line never ended:\n%s", s.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lastLine(sc string) string {
	lines := strings.Split(strings.TrimRight(sc, "\n "), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}
