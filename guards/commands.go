package guards

import (
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// globbable lists the names a glob in command position is tried against.
var globbable = []string{
	"sudo", "sudoedit", "doas", "su", "pkexec", "run0", "rm", "dd", "mkfs",
	"mke2fs", "shutdown", "reboot", "halt", "poweroff", "sh", "bash", "env",
	"runuser", "systemd-run", "systemctl", "loginctl", "mkswap", "wipefs", "blkdiscard",
}

// shells take a script with -c or on stdin.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"mksh": true, "ash": true, "yash": true, "posh": true,
}

// wrapper describes a command that runs another one: which of its options
// take a separate value, how many operands precede the command (timeout's
// duration, chroot's new root, flock's lock file), and whether NAME=VALUE
// words may precede it (env).
type wrapper struct {
	argOpts  []string
	operands int
	assigns  bool
	// scriptOpts take a shell string as their value (flock -c, script -c).
	scriptOpts []string
	// noCommand: the operands are not a command (script's log file).
	noCommand bool
	// joins: the command words are joined into a shell string (watch,
	// parallel), as eval does.
	joins bool
}

var wrappers = map[string]wrapper{
	"env":     {argOpts: []string{"-u", "--unset", "-C", "--chdir", "-a", "--argv0"}, assigns: true},
	"command": {},
	"builtin": {},
	"exec":    {argOpts: []string{"-a"}},
	"nohup":   {},
	"nice":    {argOpts: []string{"-n", "--adjustment"}},
	"timeout": {argOpts: []string{"-s", "--signal", "-k", "--kill-after"}, operands: 1},
	"time":    {argOpts: []string{"-f", "--format", "-o", "--output"}},
	"stdbuf":  {argOpts: []string{"-i", "-o", "-e", "--input", "--output", "--error"}},
	"setsid":  {},
	"xargs": {argOpts: []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-I",
		"-L", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"}},
	"busybox": {},
	"ionice":  {argOpts: []string{"-c", "--class", "-n", "--classdata"}},
	"taskset": {operands: 1},
	"chrt": {argOpts: []string{"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"},
		operands: 1},
	"chroot": {argOpts: []string{"--userspec", "--groups"}, operands: 1},
	"unshare": {argOpts: []string{"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd",
		"--map-user", "--map-group", "--map-users", "--map-groups", "--propagation", "--setgroups",
		"--monotonic", "--boottime", "-l", "--load-interp"}},
	"nsenter": {argOpts: []string{"-t", "--target", "-S", "--setuid", "-G", "--setgid"}},
	"flock": {argOpts: []string{"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"},
		scriptOpts: []string{"-c", "--command"}, operands: 1},
	"script": {argOpts: []string{"-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io",
		"-T", "--log-timing", "-m", "--logging-format", "-o", "--output-limit"},
		scriptOpts: []string{"-c", "--command"}, noCommand: true},
	"strace": {argOpts: []string{"-a", "-b", "-e", "-E", "-I", "-o", "-O", "-p", "-P", "-s", "-S",
		"-u", "-U", "-X", "--output", "--attach", "--user", "--env", "--trace", "--trace-path",
		"--string-limit", "--signal", "--status", "--columns", "--summary-sort-by", "--inject", "--fault"}},
	"ltrace": {argOpts: []string{"-a", "-A", "-D", "-e", "-F", "-l", "-n", "-o", "-p", "-s", "-u",
		"-w", "-x", "--output", "--library"}},
	"watch": {argOpts: []string{"-n", "--interval", "-q", "--equexit"}, joins: true},
	"parallel": {argOpts: []string{"-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-N",
		"-n", "--max-args", "-L", "--max-lines", "-I", "-E", "-C", "--colsep", "-d", "--delimiter",
		"--tmpdir", "--joblog", "--results", "--env", "--timeout", "--halt", "--delay",
		"--retries", "--workdir", "--wd", "--tag-string", "--sshloginfile", "-P", "--max-procs"},
		joins: true},
	// systemd-run without --user is denied in machine; with it, the
	// command runs as the same user.
	"systemd-run": {argOpts: []string{"-u", "--unit", "-p", "--property", "-E", "--setenv",
		"--description", "--slice", "--uid", "--gid", "--nice", "--working-directory", "-M",
		"--machine", "-H", "--host", "--service-type", "--on-active", "--on-boot",
		"--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar",
		"--timer-property", "--path-property", "--socket-property"}},
}

// alwaysRecursive commands descend into the directories they are given.
var alwaysRecursive = map[string]bool{
	"find": true, "rg": true, "tree": true, "du": true, "tar": true, "rsync": true,
	"zip": true, "fd": true, "ag": true, "git": false,
}

// named classifies one command by its name: commands that act on the machine
// itself, rm and find, shells and eval (whose strings are parsed in turn),
// and wrappers (whose command is classified); whatever is left is searched
// for paths.
func (c *classifier) named(name string, ws []word, depth int, via string) {
	args := ws[1:]
	switch {
	case name == "eval":
		c.script(joined(args), depth+1, via+" (inside eval)")
		return
	case shells[name]:
		c.shell(name, args, depth, via)
		return
	case name == "trap":
		c.trap(args, depth, via)
		return
	case name == "rm":
		c.rm(args, via)
	case name == "find":
		c.find(args, depth, via)
	default:
		c.machine(name, args, via)
	}
	if c.v.Deny {
		return
	}
	if w, ok := wrappers[name]; ok {
		c.wrapped(name, w, args, depth, via)
		return
	}
	c.collectPaths(name, args)
}

// wrapped skips a wrapper's options and operands and classifies the command
// it runs.
func (c *classifier) wrapped(name string, w wrapper, args []word, depth int, via string) {
	via = " (run through " + name + ")" + via
	operands := w.operands
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if operands > 0 { // timeout "$T" CMD: an operand, whatever its value
				operands--
				continue
			}
			return
		}
		if name == "env" {
			if script, known, found := splitString(args[i:]); found {
				if known {
					c.script(script, depth+1, via)
				}
				return
			}
		}
		if s, found := optionValue(w.scriptOpts, args[i:]); found {
			if s != nil {
				c.script(s.tmpl, depth+1, via)
			}
			return
		}
		switch {
		case a.val == "--" && !w.noCommand:
			c.run(name, w, args[i+1:], depth, via)
			return
		case name == "command" && strings.HasPrefix(a.val, "-") && strings.ContainsAny(a.val, "vV"):
			return // command -v only looks the name up
		case strings.HasPrefix(a.val, "-") && len(a.val) > 1:
			if slices.Contains(w.argOpts, a.val) || takesValueNext(w.argOpts, a.val) {
				i++
			}
		case w.assigns && isAssign(a.val):
		case operands > 0:
			operands--
		case w.noCommand:
		default:
			c.run(name, w, args[i:], depth, via)
			return
		}
	}
}

// run classifies the command a wrapper runs: its words, or for watch and
// parallel the shell string they join them into. parallel stops at its
// argument separators and, with no command before them, runs each
// argument as a command line.
func (c *classifier) run(name string, w wrapper, args []word, depth int, via string) {
	if !w.joins {
		c.command(args, depth, via)
		return
	}
	end := slices.IndexFunc(args, func(a word) bool { return name == "parallel" && strings.HasPrefix(a.val, ":::") })
	if end < 0 {
		c.script(joined(args), depth+1, via)
		return
	}
	if end > 0 {
		c.script(joined(args[:end]), depth+1, via)
		return
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a.val, ":::") {
			break
		}
		c.script(a.tmpl, depth+1, via)
	}
}

// optionValue reports whether args starts with one of opts (short options
// also last in a cluster, -qc STRING, or with the value attached, -cSTRING;
// long ones also as --opt=STRING) and returns its value, nil when missing.
func optionValue(opts []string, args []word) (*word, bool) {
	a := args[0]
	if len(opts) == 0 || !strings.HasPrefix(a.val, "-") || a.val == "-" || a.val == "--" {
		return nil, false
	}
	next := func() (*word, bool) {
		if len(args) > 1 {
			return &args[1], true
		}
		return nil, true
	}
	if strings.HasPrefix(a.val, "--") {
		long, _, hasValue := strings.Cut(a.val, "=")
		if !slices.Contains(opts, long) {
			return nil, false
		}
		if hasValue {
			return &word{tmpl: strings.TrimPrefix(a.tmpl, long+"=")}, true
		}
		return next()
	}
	for i := 1; i < len(a.val); i++ {
		if slices.Contains(opts, "-"+a.val[i:i+1]) {
			if i == len(a.val)-1 {
				return next()
			}
			return &word{tmpl: a.tmpl[i+1:]}, true
		}
	}
	return nil, false
}

// takesValueNext reports a cluster of short options (-iu) whose last
// letter takes a value, which is then the next word; a value-taking letter
// before the last takes the rest of the word as its value (-oL).
func takesValueNext(argOpts []string, v string) bool {
	if strings.HasPrefix(v, "--") {
		return false
	}
	for i := 1; i < len(v); i++ {
		if slices.Contains(argOpts, "-"+v[i:i+1]) {
			return i == len(v)-1
		}
	}
	return false
}

// splitString reports whether args starts with env's -S (--split-string),
// which runs its operand as a command line, and returns that script when it
// is known before run time, with placeholders for what is not.
func splitString(args []word) (script string, known, found bool) {
	a := args[0]
	switch {
	case a.val == "-S" || a.val == "--split-string":
		if len(args) > 1 {
			return args[1].tmpl, true, true
		}
		return "", false, true
	case strings.HasPrefix(a.val, "--split-string="):
		return strings.TrimPrefix(a.tmpl, "--split-string="), true, true
	case strings.HasPrefix(a.val, "-S"):
		return strings.TrimPrefix(a.tmpl, "-S"), true, true
	}
	return "", false, false
}

func isAssign(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && name != "" && !strings.ContainsAny(name, "/ ")
}

// shell unpacks "sh -c STRING"; a shell given neither -c nor a script file
// reads stdin, which stmt and pipeToShell handle.
func (c *classifier) shell(name string, args []word, depth int, via string) {
	hasC := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if hasC { // the string, with placeholders for what is dynamic
				c.script(a.tmpl, depth+1, " (inside "+name+" -c)"+via)
			}
			return
		}
		switch {
		case a.val == "--":
			if hasC && i+1 < len(args) {
				c.script(args[i+1].tmpl, depth+1, " (inside "+name+" -c)"+via)
			}
			return
		case a.val == "-o" || a.val == "+o" || a.val == "-O" || a.val == "+O" ||
			a.val == "--rcfile" || a.val == "--init-file":
			i++
		case strings.HasPrefix(a.val, "--"):
		case len(a.val) > 1 && (a.val[0] == '-' || a.val[0] == '+'):
			if strings.ContainsRune(a.val[1:], 'c') {
				hasC = true
			}
		default:
			if hasC {
				c.script(a.val, depth+1, " (inside "+name+" -c)"+via)
			}
			return
		}
	}
}

// scriptOperand finds where a shell or source reads its script from: 0 for
// stdin (a shell with neither -c nor a script operand, or with -s), the
// index in ws of the script file operand, or -1 for neither (sh -c, not a
// shell).
func scriptOperand(ws []word) int {
	if len(ws) == 0 || !ws[0].static {
		return -1
	}
	name := strings.ToLower(path.Base(ws[0].val))
	switch {
	case name == "source" || name == ".":
		return sourceOperand(ws)
	case shells[name]:
		return shellOperand(ws)
	}
	return -1
}

// sourceOperand is scriptOperand for source and ".": the first word past
// their options (bash's source takes -p PATH, since 5.3, and --).
func sourceOperand(ws []word) int {
	for i := 1; i < len(ws); i++ {
		switch {
		case ws[i].static && ws[i].val == "--":
		case ws[i].static && ws[i].val == "-p":
			i++
		default:
			return i
		}
	}
	return -1
}

// shellOperand is scriptOperand for a shell: its script operand, 0 for
// stdin (no operand, or -s), -1 with -c.
func shellOperand(ws []word) int {
	for i := 1; i < len(ws); i++ {
		a := ws[i]
		switch {
		case !a.static:
			return i
		case a.val == "--" || a.val == "-":
			if i+1 < len(ws) {
				return i + 1
			}
			return 0
		case a.val == "-o" || a.val == "+o" || a.val == "-O" || a.val == "+O" ||
			a.val == "--rcfile" || a.val == "--init-file":
			i++
		case strings.HasPrefix(a.val, "--"):
		case len(a.val) > 1 && (a.val[0] == '-' || a.val[0] == '+'):
			if a.val[0] == '-' && strings.ContainsRune(a.val[1:], 'c') {
				return -1
			}
			if strings.ContainsRune(a.val[1:], 's') {
				return 0 // the rest are the script's arguments
			}
		default:
			return i
		}
	}
	return 0
}

// scriptFD is the descriptor a shell or source reads its script from: 0
// for stdin, N for a script operand /dev/stdin, /dev/fd/N or
// /proc/self/fd/N; -1 for anything else.
func scriptFD(ws []word) int {
	i := scriptOperand(ws)
	switch {
	case i == 0:
		return 0
	case i < 0 || !ws[i].static:
		return -1
	}
	p := filepath.Clean(ws[i].val)
	if p == "/dev/stdin" {
		return 0
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if n, ok := strings.CutPrefix(p, dir); ok {
			return descriptor(n)
		}
	}
	return -1
}

// descriptor is the file descriptor number s spells, or -1.
func descriptor(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return -1
	}
	return n
}

// echoOutput is what bash's echo writes for args: leading -n, -e and -E
// are options, and -e decodes backslash escapes.
func echoOutput(args []word) string {
	escapes := false
	for len(args) > 0 && isEchoOpts(args[0].val) {
		escapes = strings.LastIndexByte(args[0].val, 'e') > strings.LastIndexByte(args[0].val, 'E')
		args = args[1:]
	}
	s := joined(args)
	if escapes {
		s = ansiC(s)
	}
	return s + "\n"
}

func isEchoOpts(s string) bool {
	return len(s) > 1 && s[0] == '-' && strings.Trim(s[1:], "neE") == ""
}

// printfOutput is what printf writes for args: the format, with its
// escapes decoded, applied again while arguments remain. Conversions are
// filled with their argument as written (%b with its escapes decoded).
// printf -v writes to a variable, not to stdout.
func printfOutput(args []word) (string, bool) {
	if len(args) > 0 && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0].val, "-v") {
		return "", false
	}
	format, rest := args[0].tmpl, args[1:]
	var sb strings.Builder
	for {
		used := false
		for i := 0; i < len(format); i++ {
			if sb.Len() > maxScript {
				return sb.String(), true
			}
			ch := format[i]
			switch {
			case ch == '\\' && i+1 < len(format):
				i = ansiCEscape(&sb, format, i+1)
			case ch == '%' && i+1 < len(format) && format[i+1] == '%':
				sb.WriteByte('%')
				i++
			case ch == '%':
				j := i + 1
				for j < len(format) && strings.IndexByte("-+ #0123456789.*", format[j]) >= 0 {
					j++
				}
				if j == len(format) {
					sb.WriteString(format[i:])
					i = j
					continue
				}
				arg := ""
				if len(rest) > 0 {
					arg, rest, used = rest[0].tmpl, rest[1:], true
				}
				if format[j] == 'b' {
					arg = ansiC(arg)
				}
				sb.WriteString(arg)
				i = j
			default:
				sb.WriteByte(ch)
			}
		}
		if !used || len(rest) == 0 {
			return sb.String(), true
		}
	}
}

// trap runs its action string when the signal comes.
func (c *classifier) trap(args []word, depth int, via string) {
	if len(args) > 0 && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) < 2 || strings.HasPrefix(args[0].val, "-") {
		return // trap -p, trap -l, trap - SIG: no action
	}
	c.script(args[0].tmpl, depth+1, " (in a trap action)"+via)
}

// rm is denied when both recursive and forced, in any spelling: -rf, -fr,
// -Rf, -r -f, --recursive --force, their unambiguous abbreviations (--rec,
// --f) and options after operands, which GNU rm accepts.
func (c *classifier) rm(args []word, via string) {
	recursive, force := false, false
	for _, a := range args {
		v := a.val
		switch {
		case !a.static:
		case v == "--":
			goto done
		case strings.HasPrefix(v, "--") && len(v) > 2:
			long, value, _ := strings.Cut(v, "=")
			recursive = recursive || strings.HasPrefix("--recursive", long)
			force = force || strings.HasPrefix("--force", long)
			// --interactive=never asks no more than --force does.
			force = force || len(long) > 3 && strings.HasPrefix("--interactive", long) &&
				(value == "never" || value == "no" || value == "none")
		case strings.HasPrefix(v, "-") && len(v) > 1:
			recursive = recursive || strings.ContainsAny(v, "rR")
			force = force || strings.ContainsRune(v, 'f')
		}
	}
done:
	if recursive && force {
		c.deny("rm", via, "rm with recursive and force removes whole trees without asking")
	}
}

// find runs the words after -exec/-execdir/-ok/-okdir up to ";" or "+".
func (c *classifier) find(args []word, depth int, via string) {
	for i := 0; i < len(args); i++ {
		switch args[i].val {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].val != ";" && args[j].val != "+" {
				j++
			}
			c.command(args[i+1:j], depth, " (run by find "+args[i].val+")"+via)
			i = j
		}
	}
}

// collectPaths keeps literal path-like operands for the path guards.
func (c *classifier) collectPaths(name string, args []word) {
	recursive := alwaysRecursive[name]
	for _, a := range args {
		if a.static && isRecursiveFlag(name, a.val) {
			recursive = true
		}
	}
	for _, a := range args {
		if !a.static || !strings.Contains(a.val, "/") && a.val != ".." {
			continue
		}
		v := a.val
		if _, after, ok := strings.Cut(v, "="); ok && strings.HasPrefix(v, "-") {
			v = after // --file=/path
		}
		if a.glob {
			prefix, _, _ := GlobPrefix(v)
			c.v.Paths = append(c.v.Paths, PathArg{Word: prefix, Recursive: true})
			continue
		}
		c.v.Paths = append(c.v.Paths, PathArg{Word: v, Recursive: recursive})
	}
}

func isRecursiveFlag(name, v string) bool {
	switch {
	case v == "--recursive":
		return true
	case strings.HasPrefix(v, "--") || !strings.HasPrefix(v, "-"):
		return false
	case strings.ContainsRune(v, 'R'):
		return true
	}
	// ls -r and sort -r reverse; elsewhere -r means recursive.
	return name != "ls" && name != "sort" && strings.ContainsRune(v, 'r')
}

// joined is the script eval would join from args, each part known only at
// run time standing in as placeholder.
func joined(args []word) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.tmpl
	}
	return strings.Join(parts, " ")
}
