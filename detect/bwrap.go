package detect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// trustedBwrap is where bwrap is looked for, in order. PATH is never
// searched: whoever controls PATH (an agent's shell, a repo's .envrc)
// would otherwise choose the program that builds the sandbox.
var trustedBwrap = []string{"/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"}

type bwrapLocation struct {
	path        string   // resolved, checked binary; "" if none
	looked      []string // candidates, annotated when rejected
	overrideErr string
}

var (
	bwrapOnce sync.Once
	bwrapLoc  bwrapLocation
)

// findBwrap locates bwrap once per process.
func findBwrap() bwrapLocation {
	bwrapOnce.Do(func() { bwrapLoc = locateBwrap(os.Getenv(EnvBwrap)) })
	return bwrapLoc
}

func resetBwrapPath() { bwrapOnce = sync.Once{} }

func locateBwrap(override string) bwrapLocation {
	if override != "" {
		p, err := checkTrusted(override, false)
		if err != nil {
			return bwrapLocation{overrideErr: fmt.Sprintf("%s=%q is not acceptable: %v", EnvBwrap, override, err)}
		}
		return bwrapLocation{path: p}
	}
	var loc bwrapLocation
	for _, c := range trustedBwrap {
		p, err := checkTrusted(c, true)
		switch {
		case err == nil:
			loc.path = p
			return loc
		case errors.Is(err, os.ErrNotExist):
			loc.looked = append(loc.looked, c)
		default:
			loc.looked = append(loc.looked, fmt.Sprintf("%s (rejected: %v)", c, err))
		}
	}
	return loc
}

// checkTrusted resolves p and accepts it only if no one but root or the
// current user could have replaced it: a sandbox is only as strong as the
// binary that builds it. system marks our fixed list: there, the overflow
// uid also counts as root, because inside a user namespace (rootless
// containers, toolbox) the host's root-owned /usr shows up as "nobody".
// An override from the environment gets no such benefit of the doubt.
func checkTrusted(p string, system bool) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("not an absolute path")
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", r)
	}
	if err := checkOwner(r, fi, false, system); err != nil {
		return "", err
	}
	dir := filepath.Dir(r)
	di, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	return r, checkOwner(dir, di, true, system)
}

// checkOwner wants fi owned by root or us and not writable by others; a
// directory may be writable by others when sticky (like /tmp), because then
// they still cannot replace our file in it.
func checkOwner(name string, fi os.FileInfo, isDir, overflowIsRoot bool) error {
	uid, ok := statOwner(fi)
	if !ok {
		return fmt.Errorf("cannot read the owner of %s on %s", name, runtime.GOOS)
	}
	if overflowIsRoot && uid != 0 && int(uid) != os.Geteuid() &&
		strconv.FormatUint(uint64(uid), 10) == readTrim("/proc/sys/kernel/overflowuid") {
		uid = 0
	}
	if uid != 0 && int(uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, want root or uid %d", name, uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 && !(isDir && fi.Mode()&os.ModeSticky != 0) {
		return fmt.Errorf("%s is group- or world-writable (mode %v)", name, fi.Mode().Perm())
	}
	return nil
}

// probeArgs is the probe command line after the bwrap binary. It uses every
// isolation feature the launcher uses, and runs bwrap itself as the payload
// (`--version` needs nothing), so one exec both proves the sandbox and
// reports the version.
func probeArgs(bwrap string) []string {
	return []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net",
		"--cap-drop", "ALL", "--new-session", "--die-with-parent",
		"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
		"--", bwrap, "--version",
	}
}

func probeBwrap(ctx context.Context) Result {
	if runtime.GOOS != "linux" {
		return Result{Backend: "bwrap", Reason: "bubblewrap (bwrap) runs only on Linux; on macOS use --backend seatbelt"}
	}
	loc := findBwrap()
	f := bwrapFacts{Path: loc.path, Looked: loc.looked, OverrideErr: loc.overrideErr, UID: os.Getuid()}
	if loc.path != "" {
		runBwrapProbe(ctx, &f)
		if f.ExitCode != 0 || f.ExecErr != "" || f.TimedOut {
			readHostFacts(&f)
		}
	}
	usable, reason := classifyBwrap(f)
	r := Result{Backend: "bwrap", Path: f.Path, Version: f.Version, Usable: usable, Reason: reason}
	if usable {
		r.BindFD = bwrapHasBindFD(ctx, f.Path)
	}
	return r
}

// bwrapHasBindFD asks bwrap's help whether it has --bind-fd: its version
// does not say, as distributions backport the option to older releases.
func bwrapHasBindFD(ctx context.Context, bwrap string) bool {
	tctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, bwrap, "--help")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, _ := cmd.Output()
	return strings.Contains(string(out), "--bind-fd") && strings.Contains(string(out), "--ro-bind-fd")
}

func runBwrapProbe(ctx context.Context, f *bwrapFacts) {
	tctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var stdout bytes.Buffer
	end := runProbe(tctx, &stdout, f.Path, probeArgs(f.Path)...)
	f.Stderr, f.ExitCode, f.TimedOut, f.ExecErr = end.stderr, end.exitCode, end.timedOut, end.execErr
	if f.ExecErr != "" {
		return
	}
	f.Version = parseBwrapVersion(stdout.String())
	if f.Version == "" && !f.TimedOut {
		// The sandbox failed before the payload ran; ask bwrap directly
		// so the report still names the version.
		out, _ := exec.CommandContext(tctx, f.Path, "--version").Output()
		f.Version = parseBwrapVersion(string(out))
	}
}

// parseBwrapVersion reads "bubblewrap 0.8.0".
func parseBwrapVersion(out string) string {
	return strings.TrimSpace(strings.TrimPrefix(firstLine(out), "bubblewrap "))
}

// readHostFacts gathers what explains a failed probe; only read on failure.
func readHostFacts(f *bwrapFacts) {
	f.UsernsClone = readTrim("/proc/sys/kernel/unprivileged_userns_clone")
	f.MaxUserNS = readTrim("/proc/sys/user/max_user_namespaces")
	f.AppArmorRestrict = readTrim("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
	if fi, err := os.Stat(f.Path); err == nil {
		f.Setuid = fi.Mode()&os.ModeSetuid != 0
	}
	for _, p := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(p); err == nil {
			f.InContainer = true
		}
	}
	if os.Getenv("container") != "" { // set by systemd-nspawn, podman, lxc
		f.InContainer = true
	}
}
