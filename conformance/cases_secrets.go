package conformance

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/claudecode"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/workspace"
)

// Secrets stay home (docs/threat-model.md, "Secrets in the environment"
// and "Credential stores"): nothing secret enters a sandbox unless the
// user names it. Each case pairs the refusal with the ordinary work beside
// it: a variable named with --env arrives, a file beside a token file is
// read, the sandbox's own TMPDIR works, a valid policy runs.
func secretCases() []Case {
	return []Case{
		{Name: "boundary-env-secrets", Class: Boundary, Summary: "the caller's environment holds API keys, tokens, AWS_*, an SSH agent's socket and the session bus: none reaches the command unless named with --env; what is named, and every ordinary variable, does",
			Run: envSecretsWithheld},
		{Name: "boundary-env-agent", Class: Boundary, Summary: "cordon run --agent NAME: the agent gets its own API key and no other secret (no other agent's key, no token, no AWS_*, no SSH agent)",
			Run: envAgentOwnKey},
		{Name: "boundary-env-hook-call", Class: Boundary, Summary: "the shell call an agent's hook rewrites (cordon run --no-tty ... -- bash -c CMD), run in the agent's environment full of keys, sees none of them; the command itself runs and writes its file",
			Run: envHookCall},
		{Name: "direct-token-files", Class: Direct, Summary: "with --workspace, read every credential store in HOME: ssh, cloud CLIs, gh's hosts.yml, the five agents' sign-ins, docker, kube, netrc, npmrc, pypirc, git-credentials, password managers; a file beside them is read",
			Run: tokenFiles},
		{Name: "direct-token-files-agent", Class: Direct, Summary: "cordon run --agent NAME reads its own sign-in file and no other agent's, nor gh's",
			Run: tokenFilesAgent},
		{Name: "direct-token-files-real-home", Class: Direct, Summary: "with HOME unset, and with HOME=/tmp, the credential stores of the home the password database names stay denied; the workspace is written",
			Run: tokenFilesRealHome},
		{Name: "cross-state-old-place", Class: CrossLaunch, Summary: "cordon's state moves (CORDON_STATE_DIR here; a home that appears, in life): the place it was kept before, with its audit key and another workspace's TMPDIR, stays unreadable; the sandbox's own TMPDIR, in the new place, works",
			Run: stateOldPlace},
		{Name: "boundary-bad-input", Class: Boundary, Summary: "an empty path flag (--workspace \"\", an unset variable) exits 2 naming it and runs nothing; a policy file with a byte that is not UTF-8 exits 125 naming the file and offset and runs nothing; one without restrictWrites runs with a warning; the same launches with good input run",
			Run: badInput},
		{Name: "work-argv-bytes", Class: Work, Summary: "argv, the command's path and the working directory hold every byte value 1-255: the command named runs, in that directory, with those arguments (JSON strings once turned \\xff into U+FFFD and ran a planted ./b\\xef\\xbf\\xbd/run)",
			Run: argvBytes},
	}
}

func envSecretsWithheld(h *H) {
	needBinary(h)
	_, p := h.ws()
	p.Env = []string{"NPM_TOKEN", "SET_HERE=given"}
	env := append(secretEnv(h.Secret), "NPM_TOKEN=named-token", "BUILD_MODE=release")
	o := h.Sandbox(p, checkVars(append(secretNames(), "NPM_TOKEN", "BUILD_MODE", "SET_HERE", "PATH", "HOME")), env...)
	h.Refuse(o, secretNames()...)
	h.Expect(o, "NPM_TOKEN", "BUILD_MODE", "SET_HERE", "PATH", "HOME")
	h.NoSecret(o)
	if !strings.Contains(o.Stderr, "withheld from the sandbox") || !strings.Contains(o.Stderr, "GITHUB_TOKEN") || strings.Contains(o.Stderr, "NPM_TOKEN") {
		h.Errorf("cordon run did not name what it withheld (and only that):\n%s", o)
	}
	// --inherit-env: today's behaviour, on request.
	o = h.Launch(Launch{Policy: p, Dir: p.Workspace, Env: env, Flags: []string{"--inherit-env"},
		Argv: []string{"/bin/sh", "-c", prologue + checkVars([]string{"GITHUB_TOKEN"}) + "\necho \"@@DO\"\"NE@@\"\n"}})
	h.Expect(o, "GITHUB_TOKEN")
}

func envAgentOwnKey(h *H) {
	needBinary(h)
	ws, _ := h.ws()
	for _, a := range []struct {
		agent string
		own   []string
	}{{"claude-code", []string{"ANTHROPIC_API_KEY"}}, {"codex", []string{"OPENAI_API_KEY", "CODEX_API_KEY"}}, {"gemini", []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}}} {
		env := append(secretEnv(h.Secret), "OPENAI_API_KEY=agent-key", "CODEX_API_KEY=agent-key", "GEMINI_API_KEY=agent-key", "GOOGLE_API_KEY=agent-key")
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") })
		env = append(env, "ANTHROPIC_API_KEY=agent-key")
		p := Policy{Workspace: ws, Agent: a.agent, Network: true}
		names := []string{"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"}
		for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} {
			if !slices.Contains(a.own, k) {
				names = append(names, k)
			}
		}
		o := h.Sandbox(p, checkVars(append(names, a.own...)), env...)
		h.Refuse(o, names...)
		h.Expect(o, a.own...)
		h.NoSecret(o)
	}
}

func envHookCall(h *H) {
	needBinary(h)
	ws, _ := h.ws()
	h.Mkdir("ws/build") // not the top: the landlock freeze keeps names there
	rw := &claudecode.Rewrite{Exe: h.Attack(), RunArgs: []claudecode.RunArg{{Flag: "--backend", Value: h.Backend()}, {Flag: "--workspace", Value: ws}}}
	call, err := rw.Wrap(prologue + checkVars(secretNames()) + "\necho built > build/built.txt && ok BUILT\n")
	if err != nil {
		h.Fatalf("rewrite: %v", err)
	}
	o := h.agentRuns(ws, []string{"/bin/sh", "-c", call}, secretEnv(h.Secret))
	h.Refuse(o, secretNames()...)
	h.Expect(o, "BUILT")
	h.NoSecret(o)
	h.Want("ws/build/built.txt", "built\n")
}

func tokenFiles(h *H) {
	_, p := h.ws()
	h.Mkdir("ws/build")
	stores := h.plantStores(h.Home)
	beside := h.Write("home/.config/gh/config.yml", "editor: vim\n")
	o := h.Sandbox(p, readStores+`cat "$B" >/dev/null && ok BESIDE; echo x > build/out.txt && ok WRITE`, "STORES="+strings.Join(stores, "\n"), "B="+beside)
	h.NoSecret(o)
	h.Expect(o, "BESIDE", "WRITE")
}

func tokenFilesAgent(h *H) {
	ws, _ := h.ws()
	h.plantStores(h.Home)
	for agent, own := range map[string]string{"claude-code": ".claude/.credentials.json", "codex": ".codex/auth.json", "gemini": ".gemini/oauth_creds.json"} {
		h.Write("home/"+own, "own-sign-in\n")
		o := h.Sandbox(Policy{Workspace: ws, Agent: agent, Network: true},
			`grep -q own-sign-in "$OWN" && ok OWN; for f in .claude/.credentials.json .codex/auth.json .gemini/oauth_creds.json .config/gh/hosts.yml .copilot/config.json; do cat "$HOME/$f" 2>/dev/null; done; true`,
			"OWN="+filepath.Join(h.Home, own))
		h.Expect(o, "OWN")
		h.NoSecret(o)
		h.Write("home/"+own, h.Secret)
	}
}

func tokenFilesRealHome(h *H) {
	real := h.realHome()
	// A store of the real home, made when missing and then left
	// (empty) behind: removed while the cases beside this one
	// launch, it would fail their launches, a denied root gone
	// between composing a policy and mounting it.
	dir := filepath.Join(real, ".fly")
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		h.Fatalf("fixture: %v", err)
	}
	f := filepath.Join(dir, "cordon-conformance-"+strconv.Itoa(os.Getpid())+"-"+h.User.Name)
	if err := os.WriteFile(f, []byte(h.Secret), 0o600); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	h.Cleanup(func() { os.Remove(f) })
	for _, p := range []string{dir, f} {
		os.Lchown(p, h.User.Uid, h.User.Gid)
	}
	_, p := h.ws()
	h.Mkdir("ws/build")
	for _, home := range []string{"", "/tmp"} {
		l := h.Script(p, `cat "$F" 2>/dev/null; ls "$D" >/dev/null 2>&1 && ok LIST; echo x > build/out.txt && ok WRITE`, "F="+f, "D="+dir)
		if home == "" {
			l.NoHome = true
		} else {
			l.Env = append(l.Env, "HOME="+home)
		}
		o := h.Launch(l)
		h.NoSecret(o)
		h.Refuse(o, "LIST")
		h.Expect(o, "WRITE")
	}
}

func stateOldPlace(h *H) {
	if h.stateOverride() != "" {
		h.NotApplicable("the suite runs with CORDON_STATE_DIR set; the case moves the state from the user's usual place")
	}
	// The usual place, in use until now; it exists, since the
	// harness has launched as this user. Nothing is made or
	// removed there but the case's own TMPDIR: the cases beside
	// this one launch with it.
	old := state.PathFor(h.User.Uid)
	if fi, err := os.Lstat(old); err != nil || !fi.IsDir() {
		h.NotApplicable("%s's state directory %s does not exist yet (%v)", h.User.Name, old, err)
	}
	draft := filepath.Join(old, state.Tmp, "cordon-conformance-"+strconv.Itoa(os.Getpid())+"-"+h.User.Name)
	if err := os.MkdirAll(draft, 0o700); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	h.Cleanup(func() { os.RemoveAll(draft) })
	if err := os.WriteFile(filepath.Join(draft, "draft"), []byte(h.Secret), 0o600); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	os.Lchown(draft, h.User.Uid, h.User.Gid)
	os.Lchown(filepath.Join(draft, "draft"), h.User.Uid, h.User.Gid)
	_, p := h.ws()
	moved := "CORDON_STATE_DIR=" + filepath.Join(h.Dir, "state")
	o := h.Sandbox(p, `cat "$D/draft" 2>/dev/null; ls "$O" >/dev/null 2>&1 && ok LIST
cat "$O/audit/key" >/dev/null 2>&1 && ok KEY
echo x > "$D/planted" 2>/dev/null && ok PLANT
case "$TMPDIR" in "$NEW"/*) ok NEWPLACE;; esac
t=$(mktemp) && echo y > "$t" && ok MKTEMP`, "O="+old, "D="+draft, "NEW="+filepath.Join(h.Dir, "state"), moved)
	h.NoSecret(o)
	h.Refuse(o, "LIST", "KEY", "PLANT")
	h.Expect(o, "MKTEMP", "NEWPLACE")
	if _, err := os.Lstat(filepath.Join(draft, "planted")); err == nil {
		h.Errorf("host: the sandbox wrote in the old state place %s", draft)
	}
}

func badInput(h *H) {
	needBinary(h)
	ws, _ := h.ws()
	script := func(mark string) []string {
		return []string{"/bin/sh", "-c", "echo ran > " + strconv.Quote(filepath.Join(ws, mark))}
	}
	for _, flag := range []string{"--workspace", "--deny", "--writable", "--policy", "--readonly", "--audit"} {
		o := h.execRaw(Launch{Dir: ws, Flags: []string{flag, ""}, Argv: script("empty")})
		if o.Code != 2 || !strings.Contains(o.Stderr, flag+` ""`) {
			h.Errorf("%s \"\": want exit 2 naming the flag:\n%s", flag, o)
		}
	}
	h.Absent("ws/empty")
	bad := h.Write("bad.json", `{"restrictWrites":true,"writableRoots":["`+ws+`"],"deniedRoots":["`+h.Dir+"/d\xff"+`"]}`)
	o := h.execRaw(Launch{Dir: ws, Policy: Policy{File: bad}, Argv: script("bad")})
	if o.Code != 125 || !strings.Contains(o.Stderr, bad) || !strings.Contains(o.Stderr, "byte offset") {
		h.Errorf("a policy file with \\xff: want exit 125 naming the file and the offset:\n%s", o)
	}
	h.Absent("ws/bad")
	good := h.Write("good.json", `{"restrictWrites":true,"writableRoots":["`+ws+`"]}`)
	o = h.execRaw(Launch{Dir: ws, Policy: Policy{File: good}, Argv: script("good")})
	h.Want("ws/good", "ran\n")
	if strings.Contains(o.Stderr, "warning") {
		h.Errorf("a policy restricting writes was warned about:\n%s", o)
	}
	open := h.Write("open.json", `{"deniedRoots":["`+h.Dir+`/d"]}`)
	o = h.execRaw(Launch{Dir: ws, Policy: Policy{File: open}, Argv: script("open")})
	h.Want("ws/open", "ran\n")
	if !strings.Contains(o.Stderr, "leaves writes unrestricted") {
		h.Errorf("a policy leaving writes unrestricted ran without the warning:\n%s", o)
	}
}

func argvBytes(h *H) {
	ws, _ := h.ws()
	all := make([]byte, 0, 255)
	for b := 1; b <= 255; b++ {
		all = append(all, byte(b))
	}
	name := string(bytes.ReplaceAll(all, []byte("/"), nil))
	dir := filepath.Join(ws, "b\xff", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	run := "#!/bin/sh\nprintf '%s' \"$1\" > \"$OUT\"; /bin/pwd -P > \"$OUT.pwd\"\n"
	os.WriteFile(filepath.Join(dir, "run"), []byte(run), 0o755)
	planted := filepath.Join(ws, "b\xef\xbf\xbd", strings.ToValidUTF8(name, "\uFFFD"))
	os.MkdirAll(planted, 0o755)
	os.WriteFile(filepath.Join(planted, "run"), []byte("#!/bin/sh\necho planted > \"$OUT\"\n"), 0o755)
	out := filepath.Join(dir, "out") // not the workspace's top: the landlock freeze keeps names there
	o := h.Launch(Launch{Policy: Policy{Workspace: ws}, Dir: dir, Argv: []string{"./run", string(all)}, Env: []string{"OUT=" + out}})
	got, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(got, all) {
		h.Errorf("host: the argument arrived as %q, not every byte 1-255 (%v):\n%s", got, err, o)
	}
	if pwd, err := os.ReadFile(out + ".pwd"); err != nil || string(pwd) != dir+"\n" {
		h.Errorf("host: the command ran in %q, not %q (%v)", pwd, dir, err)
	}
}

// secretNames are the variables secretEnv sets, each of which marks a
// secret by its name.
func secretNames() []string {
	return []string{"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "PGPASSWORD",
		"npm_config__auth", "MY_CREDENTIALS", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS"}
}

// secretEnv is a caller's environment full of secrets, each holding secret
// (the sockets' hold a path with it, as a real one would name a place).
func secretEnv(secret string) []string {
	var env []string
	for _, n := range secretNames() {
		env = append(env, n+"="+secret)
	}
	return env
}

// checkVars is a script that marks each of names set in its environment.
func checkVars(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(`[ -n "${` + n + `+set}" ] && ok ` + n + "\n")
	}
	b.WriteString("true")
	return b.String()
}

// readStores is a script that prints every file in the stores listed in
// $STORES, one a line.
const readStores = `printf '%s\n' "$STORES" | while IFS= read -r p; do cat "$p" 2>/dev/null; find "$p" -type f -exec cat {} + 2>/dev/null; done
`

// plantStores makes every credential store of workspace.CredentialStores
// under home, each file (or a file in each directory) holding the secret,
// and returns their paths.
func (h *H) plantStores(home string) []string {
	var out []string
	for _, n := range workspace.CredentialStores {
		p := filepath.Join(home, n)
		base := filepath.Base(n)
		file := strings.Contains(base[1:], ".") || slices.Contains([]string{".netrc", ".npmrc", ".pypirc", ".git-credentials"}, base)
		rel, _ := filepath.Rel(h.Dir, p)
		if file {
			h.Write(rel, h.Secret)
		} else {
			h.Write(rel+"/token", h.Secret)
		}
		out = append(out, p)
	}
	return out
}

// realHome is the case user's home as the password database names it,
// or the case is not applicable when it names none that exists.
func (h *H) realHome() string {
	u, err := user.LookupId(strconv.Itoa(h.User.Uid))
	if err != nil || !filepath.IsAbs(u.HomeDir) || u.HomeDir == "/" {
		h.NotApplicable("%s has no home directory in the password database", h.User.Name)
	}
	fi, err := os.Stat(u.HomeDir)
	if err != nil || !fi.IsDir() {
		h.NotApplicable("%s's home %s does not exist (%v)", h.User.Name, u.HomeDir, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != h.User.Uid {
		h.NotApplicable("%s's home %s is not its own", h.User.Name, u.HomeDir)
	}
	return filepath.Clean(u.HomeDir)
}

// needBinary makes the case not applicable to the in-process executor:
// what it checks is cordon run's command line and environment (that
// executor hands Cmd.Env over as given; the Go API's default is tested by
// the launcher's TestEnvDefaultWithholds).
func needBinary(h *H) {
	if h.InProcess() {
		h.NotApplicable("about cordon run's command line and environment; the in-process executor gives Cmd.Env as it is")
	}
}

// execRaw runs l through the executor without Launch's checks: for a
// launch that must be refused before anything runs.
func (h *H) execRaw(l Launch) Output {
	h.handOver()
	l.Env = h.env(l.Env)
	ctx, cancel := context.WithTimeout(h.ctx, 30e9)
	defer cancel()
	o, err := h.x.Exec(ctx, h.User, l)
	if err != nil {
		h.Fatalf("launch: %v\n%s", err, o)
	}
	return o
}

// agentRuns runs argv on the host as the case's user, in dir, with the case's
// environment and env: what an agent runs, such as a shell call its hook
// rewrote to go through cordon run.
func (h *H) agentRuns(dir string, argv []string, env []string) Output {
	h.handOver()
	ctx, cancel := context.WithTimeout(h.ctx, 30e9)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = h.env(env)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if !h.User.Invoker {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(h.User.Uid), Gid: uint32(h.User.Gid), Groups: []uint32{}}}
	}
	err := cmd.Run()
	o := Output{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		o.Code = ee.ExitCode()
	} else if err != nil {
		h.Fatalf("host: %v: %v", argv, err)
	}
	return o
}
