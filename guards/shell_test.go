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
