package guards

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClassifyShellDenies(t *testing.T) {
	tests := []struct {
		name, src, command string
	}{
		// The five classics.
		{"sudo", "sudo apt install x", "sudo"},
		{"rm -rf root", "rm -rf / --no-preserve-root", "rm"},
		{"rm -fr", "rm -fr ./build", "rm"},
		{"mkfs", "mkfs.ext4 /dev/sda1", "mkfs.ext4"},
		{"dd to disk", "dd if=/dev/zero of=/dev/sda", "dd"},
		// Every privilege escalator and machine stopper.
		{"doas", "doas ls", "doas"},
		{"su", "su -c id root", "su"},
		{"pkexec", "pkexec bash", "pkexec"},
		{"shutdown", "shutdown -h now", "shutdown"},
		{"reboot", "reboot", "reboot"},
		{"halt", "halt", "halt"},
		{"poweroff", "poweroff", "poweroff"},
		{"systemctl reboot", "systemctl reboot", "systemctl"},
		{"mkfs plain", "mkfs -t ext4 /dev/sdb", "mkfs"},
		// rm spellings.
		{"rm -Rf", "rm -Rf build", "rm"},
		{"rm -r -f", "rm -r -f build", "rm"},
		{"rm long", "rm --recursive --force build", "rm"},
		{"rm abbreviated long", "rm --rec --f build", "rm"},
		{"rm options after operand", "rm build -rf", "rm"},
		{"rm -rfv", "rm -rfv build", "rm"},
		{"rm mixed", "rm -r --force=always build", "rm"},
		// Quoting and escapes.
		{"single quoted", "'sudo' id", "sudo"},
		{"double quoted", `"sudo" id`, "sudo"},
		{"split quotes", `su""do id`, "sudo"},
		{"backslash", `\sudo id`, "sudo"},
		{"inner backslash", `s\udo id`, "sudo"},
		{"ansi-c hex", `$'\x73udo' id`, "sudo"},
		{"ansi-c octal", `$'\163udo' id`, "sudo"},
		{"quoted flags", `rm "-rf" x`, "rm"},
		{"upper case", "SUDO id", "sudo"},
		// Paths and globs in command position.
		{"absolute path", "/usr/bin/sudo id", "sudo"},
		{"relative path", "../../usr/bin/sudo id", "sudo"},
		{"glob name", "/usr/bin/su[d]o id", "sudo"},
		{"glob star", "/usr/bin/sud? id", "sudo"},
		{"brace expansion", "{sudo,id}", "sudo"},
		{"brace rm", "{rm,-rf,/}", "rm"},
		// Assignments and wrappers.
		{"leading assignment", "FOO=1 sudo id", "sudo"},
		{"env", "env FOO=1 sudo id", "sudo"},
		{"env -i -u", "env -i -u HOME sudo id", "sudo"},
		{"env -S", "env -S 'sudo id'", "sudo"},
		{"command", "command sudo id", "sudo"},
		{"builtin", "builtin sudo id", "sudo"},
		{"exec", "exec sudo id", "sudo"},
		{"exec -a", "exec -a name sudo id", "sudo"},
		{"nohup", "nohup rm -rf x &", "rm"},
		{"nice", "nice -n 10 sudo id", "sudo"},
		{"nice attached", "nice -5 sudo id", "sudo"},
		{"timeout", "timeout 5 sudo id", "sudo"},
		{"timeout options", "timeout -s KILL -k 2 5 sudo id", "sudo"},
		{"time keyword", "time sudo id", "sudo"},
		{"time binary", "/usr/bin/time -p sudo id", "sudo"},
		{"stdbuf", "stdbuf -oL sudo id", "sudo"},
		{"setsid", "setsid -f sudo id", "sudo"},
		{"xargs", "find . -name '*.o' | xargs rm -rf", "rm"},
		{"xargs options", "xargs -n 1 -P 4 sudo", "sudo"},
		{"busybox", "busybox rm -rf /", "rm"},
		{"stacked wrappers", "env nice nohup timeout 3 sudo id", "sudo"},
		{"wrapper end of options", "env -- sudo id", "sudo"},
		{"find -exec", `find / -exec rm -rf {} \;`, "rm"},
		// Other shells' strings, recursively.
		{"sh -c", "sh -c 'sudo id'", "sudo"},
		{"bash -c", `bash -c "rm -rf /"`, "rm"},
		{"bash -lc", "bash -lc 'sudo id'", "sudo"},
		{"bash -e -c", "bash -e -o pipefail -c 'sudo id'", "sudo"},
		{"nested sh -c", `sh -c "bash -c 'sudo id'"`, "sudo"},
		{"absolute shell", "/bin/sh -c 'mkfs /dev/sda'", "mkfs"},
		{"eval", "eval sudo id", "sudo"},
		{"eval quoted", `eval "rm -rf /"`, "rm"},
		{"heredoc to shell", "sh <<'EOF'\nsudo id\nEOF", "sudo"},
		{"here-string to shell", "bash <<< 'sudo id'", "sudo"},
		{"echo piped to shell", "echo 'sudo id' | sh", "sudo"},
		// Structure: lists, pipelines, subshells, substitutions, functions.
		{"and list", "true && sudo id", "sudo"},
		{"or list", "false || sudo id", "sudo"},
		{"sequence", "ls; sudo id", "sudo"},
		{"newline", "ls\nsudo id", "sudo"},
		{"pipeline", "cat x | sudo tee /etc/x", "sudo"},
		{"subshell", "(sudo id)", "sudo"},
		{"block", "{ sudo id; }", "sudo"},
		{"command substitution", "echo $(sudo id)", "sudo"},
		{"backticks", "echo `sudo id`", "sudo"},
		{"process substitution", "diff <(sudo cat /etc/shadow) x", "sudo"},
		{"in double quotes", `echo "$(sudo id)"`, "sudo"},
		{"if", "if true; then sudo id; fi", "sudo"},
		{"for", "for i in 1; do rm -rf /; done", "rm"},
		{"function body", "f() { sudo id; }; f", "sudo"},
		{"negated", "! sudo id", "sudo"},
		{"background", "sudo id &", "sudo"},
		{"assignment substitution", "x=$(sudo id)", "sudo"},
		// Devices.
		{"redirect to disk", "cat img > /dev/sda", "/dev/sda"},
		{"append to nvme", "echo x >> /dev/nvme0n1", "/dev/nvme0n1"},
		{"redirect all", "cat img &> /dev/sdb", "/dev/sdb"},
		{"redirect unclean", "cat img > /dev/../dev/sda", "/dev/../dev/sda"},
		{"dd quoted device", `dd "of=/dev/sda" if=x`, "dd"},
		// Shell strings with a dynamic argument: each part known only at
		// run time stands in as a placeholder word, the rest is judged.
		{"sh -c dynamic argument", `sh -c "sudo id $HOME"`, "sudo"},
		{"sh -c dynamic after --", `sh -c -- "sudo $1"`, "sudo"},
		{"eval dynamic argument", `eval "sudo id $HOME"`, "sudo"},
		{"eval dynamic word", `eval sudo id "$HOME"`, "sudo"},
		{"unquoted heredoc dynamic", "bash <<EOF\nsudo id $HOME\nEOF", "sudo"},
		{"echo dynamic piped", `echo "sudo id $HOME" | sh`, "sudo"},
		{"env -S dynamic", `env -S "sudo id $HOME"`, "sudo"},
		{"wrapper dynamic operand", `timeout "$T" sudo id`, "sudo"},
		// Other ways into a shell.
		{"printf piped", `printf '%s\n' 'sudo id' | sh`, "sudo"},
		{"printf format piped", `printf 'sudo id\n' | bash`, "sudo"},
		{"printf reused format", `printf '%s\n' ls 'sudo id' | sh`, "sudo"},
		{"echo -e piped", `echo -e 'ls\nsudo id' | sh`, "sudo"},
		{"echo -n piped", `echo -n 'sudo id' | sh`, "sudo"},
		{"sh /dev/stdin", "sh /dev/stdin <<< 'sudo id'", "sudo"},
		{"bash -s with args", "bash -s one two <<< 'sudo id'", "sudo"},
		{"bash -o then stdin", "bash -o pipefail <<< 'sudo id'", "sudo"},
		{"source /dev/stdin", "source /dev/stdin <<< 'sudo id'", "sudo"},
		{"dot /dev/stdin heredoc", ". /dev/stdin <<'EOF'\nsudo id\nEOF", "sudo"},
		{"source /dev/fd/3", "source /dev/fd/3 3<<< 'sudo id'", "sudo"},
		{"sh /proc/self/fd/0", "sh /proc/self/fd/0 <<< 'sudo id'", "sudo"},
		{"echo piped to source", "echo 'sudo id' | source /dev/stdin", "sudo"},
		{"dot process substitution", ". <(echo sudo id)", "sudo"},
		{"source process substitution", "source <(printf 'rm -rf /')", "rm"},
		{"bash process substitution", "bash <(echo sudo id)", "sudo"},
		{"trap", "trap 'sudo id' EXIT", "sudo"},
		{"trap --", "trap -- 'rm -rf /' INT TERM", "rm"},
		{"env -a", "env -a x sudo id", "sudo"},
		{"env --argv0", "env --argv0 x sudo id", "sudo"},
		{"env clustered", "env -iu HOME sudo id", "sudo"},
		// Wrappers that run their operands as a command.
		{"chroot", "chroot /mnt sudo id", "sudo"},
		{"chroot userspec", "chroot --userspec 1000:1000 /mnt rm -rf /x", "rm"},
		{"unshare", "unshare -r sudo id", "sudo"},
		{"unshare setuid", "unshare -S 0 --propagation private -m sudo id", "sudo"},
		{"flock", "flock /tmp/lock sudo id", "sudo"},
		{"flock -c", "flock -w 5 /tmp/lock -c 'sudo id'", "sudo"},
		{"script -c", "script -c 'sudo id' /dev/null", "sudo"},
		{"script -qc", "script -qc 'sudo id' out.log", "sudo"},
		{"script --command=", "script --command='sudo id'", "sudo"},
		{"strace", "strace -f -o trace.log sudo id", "sudo"},
		{"nsenter", "nsenter -t 1 -m -u sudo id", "sudo"},
		{"watch", "watch -n 1 sudo id", "sudo"},
		{"watch string", "watch 'ls; sudo id'", "sudo"},
		{"parallel", "parallel -j 2 sudo ::: id", "sudo"},
		{"parallel string", "parallel 'rm -rf {}' ::: a b", "rm"},
		{"parallel commands as arguments", "parallel ::: ls 'sudo id'", "sudo"},
		{"runuser", "runuser -u root -- id", "runuser"},
		{"systemd-run", "systemd-run --uid=0 id", "systemd-run"},
		{"systemd-run user", "systemd-run --user -p Nice=5 sudo id", "sudo"},
		{"setsid plain", "setsid sudo id", "sudo"},
		{"stdbuf separate", "stdbuf -o L sudo id", "sudo"},
		{"ionice", "ionice -c 3 sudo id", "sudo"},
		{"taskset", "taskset 0x1 sudo id", "sudo"},
		{"taskset -c", "taskset -c 0,1 sudo id", "sudo"},
		{"chrt", "chrt -f 10 sudo id", "sudo"},
		{"doas wrapped", "nice doas id", "doas"},
		{"pkexec wrapped", "setsid pkexec id", "pkexec"},
		// Stopping the machine and writing raw devices.
		{"systemctl start reboot.target", "systemctl start reboot.target", "systemctl"},
		{"systemctl isolate poweroff.target", "systemctl isolate poweroff.target", "systemctl"},
		{"systemctl isolate rescue", "systemctl --no-block isolate rescue", "systemctl"},
		{"systemctl start halt.target", "systemctl start halt.target", "systemctl"},
		{"systemctl start kexec.target", "systemctl start kexec.target", "systemctl"},
		{"systemctl emergency", "systemctl emergency", "systemctl"},
		{"systemctl kexec", "systemctl kexec", "systemctl"},
		{"loginctl poweroff", "loginctl poweroff", "loginctl"},
		{"loginctl reboot", "loginctl reboot", "loginctl"},
		{"sysrq redirect", "echo b > /proc/sysrq-trigger", "/proc/sysrq-trigger"},
		{"sysrq tee", "echo o | tee /proc/sysrq-trigger", "tee"},
		{"dd through proc root", "dd if=img of=/proc/self/root/dev/sda", "dd"},
		{"dd through pid root", "dd if=img of=/proc/1/root/dev/sda", "dd"},
		{"dd double slash", "dd if=img of=//dev/sda", "dd"},
		{"redirect through proc root", "cat img > /proc/self/root/dev/sda", "/proc/self/root/dev/sda"},
		{"tee device", "tee /dev/sda < img", "tee"},
		{"cp onto device", "cp img /dev/sda", "cp"},
		{"cp -f onto nvme", "cp -f img /dev/nvme0n1", "cp"},
		{"mkswap", "mkswap /dev/sda2", "mkswap"},
		{"wipefs -a", "wipefs -a /dev/sda", "wipefs"},
		{"wipefs --all", "wipefs --all --force /dev/sda", "wipefs"},
		{"blkdiscard", "blkdiscard /dev/sda", "blkdiscard"},
		{"shred device", "shred -n 1 /dev/sda", "shred"},
		{"rm interactive never", "rm -r --interactive=never /", "rm"},
		{"rm interactive abbreviated", "rm -R --inter=no x", "rm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := ClassifyShell(tt.src)
			require.True(t, v.Deny, "expected a hard deny for %q, got %+v", tt.src, v)
			require.False(t, v.Unparsable, "reason: %s", v.Reason)
			require.Equal(t, tt.command, v.Command, "reason: %s", v.Reason)
			require.NotEmpty(t, v.Reason)
		})
	}
}

func TestClassifyShellOverMatches(t *testing.T) {
	tests := []struct{ name, src string }{
		{"echo argument", "echo sudo rm -rf /"},
		{"grep pattern", `grep -r "rm -rf" .`},
		{"commit message", `git commit -m "sudo rm -rf / and mkfs"`},
		{"printf", "printf 'shutdown now\\n'"},
		{"file named sudo", "cat sudo.txt"},
		{"rm without force", "rm -r build"},
		{"rm force only", "rm -f old.log"},
		{"rm plain", "rm old.log"},
		{"rm after --", "rm -- -rf"},
		{"dd to file", "dd if=/dev/zero of=disk.img bs=1M count=1"},
		{"dd from disk", "dd if=/dev/sda of=backup.img"},
		{"redirect to null", "make > /dev/null 2>&1"},
		{"redirect to stderr", "echo x > /dev/stderr"},
		{"redirect to fd", "echo x > /dev/fd/3"},
		{"command -v", "command -v sudo"},
		{"which", "which sudo"},
		{"man", "man shutdown"},
		{"sh script file", "sh ./build.sh"},
		{"bash -c safe", "bash -c 'ls -la'"},
		{"heredoc to cat", "cat <<EOF\nsudo id\nEOF"},
		{"echo into file", "echo 'rm -rf /' > notes.txt"},
		{"variable named sudo", "sudo=1; echo $sudo"},
		{"ssh remote", "git log --grep=reboot"},
		{"env only", "env"},
		{"timeout duration only", "timeout 5"},
		{"ls", "ls -la"},
		{"git diff", "git diff --stat"},
		{"cat passwd", "cat /etc/passwd"},
		{"python", "python3 script.py"},
		{"redirect to file", "ls > files.txt"},
		{"dynamic command", "$CMD -rf /"},
		{"systemctl status", "systemctl status"},
		{"huge brace", "echo {1..100000}"},
		{"sh -c dynamic command", `sh -c "$CMD id"`},
		{"sh -c dynamic echo", `sh -c "echo sudo $HOME"`},
		{"eval substitution", `eval "$(cat setup.sh)"`},
		{"printf not piped", `printf '%s\n' 'sudo id'`},
		{"printf argument piped", `printf 'x %s\n' 'sudo id' | sh`},
		{"echo piped to grep", "echo sudo | grep sudo"},
		{"grep sudo", "grep sudo /etc/group"},
		{"source file", "source ./env.sh"},
		{"sh /dev/stdin safe", "sh /dev/stdin <<< 'ls'"},
		{"dot process substitution safe", ". <(echo ls)"},
		{"source dynamic", `source <(kubectl completion bash)`},
		{"trap reset", "trap - EXIT"},
		{"trap print", "trap -p"},
		{"trap safe", "trap 'rm -f tmp.$$' EXIT"},
		{"chroot safe", "chroot /mnt ls"},
		{"flock safe", "flock /tmp/lock make"},
		{"script log only", "script -q out.log"},
		{"watch safe", "watch -n 1 ls"},
		{"parallel safe", "parallel gzip ::: a b"},
		{"taskset pid", "taskset -p 1234"},
		{"systemd-run user safe", "systemd-run --user make"},
		{"strace safe", "strace ls"},
		{"systemctl status target", "systemctl status reboot.target"},
		{"systemctl list targets", "systemctl list-units --type=target"},
		{"loginctl sessions", "loginctl list-sessions"},
		{"tee file", "make | tee build.log"},
		{"tee null", "echo x | tee /dev/null"},
		{"cp from disk", "cp /dev/sda disk.img"},
		{"cp files", "cp a.txt b.txt"},
		{"cat sysrq", "cat /proc/sysrq-trigger"},
		{"wipefs list", "wipefs /dev/sda"},
		{"shred file", "shred secret.txt"},
		{"rm interactive always", "rm -r --interactive=always x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := ClassifyShell(tt.src)
			require.False(t, v.Deny, "over-match on %q: %s", tt.src, v.Reason)
		})
	}
}

func TestClassifyShellUnparsable(t *testing.T) {
	for _, src := range []string{"echo 'unterminated", "if true; then", "sh -c 'echo \"x'", "(ls", "ls |", "sudo id )"} {
		t.Run(src, func(t *testing.T) {
			v := ClassifyShell(src)
			require.True(t, v.Deny, "%q must be denied", src)
			if src != "sudo id )" {
				require.True(t, v.Unparsable, "%q: %+v", src, v)
			}
		})
	}
}

func TestClassifyShellDepth(t *testing.T) {
	src := "sudo id"
	for range maxDepth + 2 {
		q := "'" + strings.ReplaceAll(src, "'", `'\''`) + "'"
		src = "sh -c " + q
	}
	v := ClassifyShell(src)
	require.True(t, v.Deny)
}

// Commands nested or long enough to overflow the parser's stack (a fatal
// error, which no recover catches) or to take seconds in brace expansion
// are denied as unreadable before they are parsed.
func TestClassifyShellNestingBound(t *testing.T) {
	for name, src := range map[string]string{
		"subshells":      strings.Repeat("(", 400000) + "true" + strings.Repeat(")", 400000),
		"substitutions":  strings.Repeat("echo $(", 200000) + "true" + strings.Repeat(")", 200000),
		"braces":         strings.Repeat("{", 12000) + "a,b" + strings.Repeat("}", 12000),
		"keywords":       strings.Repeat("if true; then ", 100000) + "true" + strings.Repeat("; fi", 100000),
		"just below":     strings.Repeat("(", maxNesting) + "true" + strings.Repeat(")", maxNesting),
		"a long command": "echo " + strings.Repeat("a", maxScript),
	} {
		t.Run(name, func(t *testing.T) {
			v := ClassifyShell(src)
			if name == "just below" {
				require.False(t, v.Unparsable, "%+v", v.Reason)
				return
			}
			require.True(t, v.Deny, name)
			require.True(t, v.Unparsable, "%s: %s", name, v.Reason)
		})
	}
}

func TestClassifyShellPaths(t *testing.T) {
	v := ClassifyShell("cat ../x/secret && find /agents -name '*.key' && ls /agents/*/ > out/list")
	require.False(t, v.Deny)
	require.Equal(t, []PathArg{
		{Word: "../x/secret"},
		{Word: "/agents", Recursive: true},
		{Word: "out/list"},
		{Word: "/agents", Recursive: true},
	}, v.Paths)
}
