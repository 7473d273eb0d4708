//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/launcher"
)

// buildCordon builds cordon to out; flags go to go build (-ldflags).
func buildCordon(out string, flags ...string) error {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return fmt.Errorf("find module root (run from the repository): %w", err)
	}
	if err := goBuildFlags(strings.TrimSpace(string(root)), out, "./cmd/cordon", flags); err != nil {
		return fmt.Errorf("build cordon: %w", err)
	}
	return nil
}

// goLauncherSrc is the smallest Go launcher: it only execs its arguments.
const goLauncherSrc = `package main

import (
	"os"
	"syscall"
)

func main() {
	panic(syscall.Exec(os.Args[1], os.Args[1:], os.Environ()))
}
`

// buildGoLauncher writes goLauncherSrc as its own module into dir and
// builds it to out.
func buildGoLauncher(dir, out string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range map[string]string{
		"go.mod":  "module golauncher\n\ngo 1.26\n",
		"main.go": goLauncherSrc,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	// Its own module, whatever go.work sits above the temp dir.
	if err := goBuild(dir, out, ".", "GOWORK=off"); err != nil {
		return fmt.Errorf("build the minimal Go launcher: %w", err)
	}
	return nil
}

// goBuild builds pkg in dir to out with CGO_ENABLED=0 (and env).
func goBuild(dir, out, pkg string, env ...string) error {
	return goBuildFlags(dir, out, pkg, nil, env...)
}

func goBuildFlags(dir, out, pkg string, flags []string, env ...string) error {
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, flags...), pkg)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// makeWorkspace is a small git repository: a few files, a commit.
func makeWorkspace(ws string) error {
	for name, body := range map[string]string{
		"README.md":       "# fixture\n",
		"go.mod":          "module fixture\n\ngo 1.26\n",
		"main.go":         "package main\n\nfunc main() {}\n",
		"internal/x/x.go": "package x\n",
		"docs/notes.txt":  "notes\n",
	} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "."},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "fixture"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, out)
		}
	}
	return nil
}

func profile(cordon string, env []string, dir string, args ...string) (*launcher.Rendered, error) {
	cmd := exec.Command(cordon, append([]string{"profile", "--json"}, args...)...)
	cmd.Env, cmd.Dir = env, dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cordon profile: %w", err)
	}
	var r launcher.Rendered
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("cordon profile: %w", err)
	}
	for i := 0; i < len(r.Argv); i++ {
		switch r.Argv[i] {
		case "--seccomp": // shown with a placeholder fd; rawArgv passes its own
			r.Argv = slices.Delete(r.Argv, i, i+2)
			i--
		case "--args":
			return nil, fmt.Errorf("cordon profile: argv passes --args FD; the raw bwrap side of this benchmark must learn to supply it")
		}
	}
	return &r, nil
}

// rawArgv is the profile's bwrap argv with the seccomp filter the launcher
// adds at launch (bwrap.Seccomp, network off) read from fd, and cmd.
func rawArgv(prof *launcher.Rendered, fd int, cmd ...string) []string {
	// The profile ends its options with "--seccomp FD --": put the real
	// descriptor in place of FD.
	i := slices.Index(prof.Argv, "--")
	argv := slices.Clone(prof.Argv[:i])
	if j := slices.Index(argv, "--seccomp"); j >= 0 {
		argv = slices.Delete(argv, j, j+2)
	}
	argv = append(argv, "--seccomp", fmt.Sprint(fd), "--")
	return append(argv, cmd...)
}

// seccompFile holds the filter cordon's launches pass; rewind it before
// each use, since bwrap reads it through a shared file offset.
func seccompFile(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "seccomp-")
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(bwrap.Seccomp(bwrap.SocketsFor(false))); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// rawCmd is raw bwrap with the seccomp filter on fd 3 (and extra after it).
func rawCmd(argv []string, filter *os.File, extra ...*os.File) (*exec.Cmd, error) {
	if _, err := filter.Seek(0, 0); err != nil {
		return nil, err
	}
	for _, f := range extra {
		if _, err := f.Seek(0, 0); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = append([]*os.File{filter}, extra...)
	return cmd, nil
}

func missing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			out = append(out, p)
		}
	}
	return out
}

// makeStubs makes the stubs that do not exist (cordon's lingering ones
// do) and returns those it made.
func makeStubs(stubs []string) ([]string, error) {
	var made []string
	for _, p := range stubs { // shallow to deep
		// A stub's parent may be one too that the profile does not
		// list (.github of .github/hooks, gone with the launch that
		// made it): made here, and removed after it.
		var missing []string
		for q := p; ; q = filepath.Dir(q) {
			if _, err := os.Lstat(q); err == nil || q == filepath.Dir(q) {
				break
			}
			missing = append(missing, q)
		}
		for _, q := range slices.Backward(missing) {
			if err := os.Mkdir(q, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				removeStubs(made)
				return nil, err
			} else if err == nil {
				made = append(made, q)
			}
		}
	}
	return made, nil
}

func removeStubs(stubs []string) {
	for _, p := range slices.Backward(stubs) {
		syscall.Rmdir(p)
	}
}

// checkSameMounts proves (b) is the same sandbox as (a): the mount table
// seen inside both is identical.
func checkSameMounts(cordon string, prof *launcher.Rendered, filter *os.File, stubs, env []string, ws string) error {
	read := "/proc/self/mountinfo"
	var got [2]string
	var out bytes.Buffer
	cmd := exec.Command(cordon, "run", "--backend", "bwrap", "--workspace", ws, "--", "/bin/cat", read)
	cmd.Stdout = &out
	if _, err := sample(cmd, env, ws); err != nil {
		return err
	}
	got[0] = mountShape(out.String())
	made, err := makeStubs(stubs)
	if err != nil {
		return err
	}
	out.Reset()
	cmd, err = rawCmd(rawArgv(prof, 3, "/bin/cat", read), filter)
	if err != nil {
		return err
	}
	cmd.Stdout = &out
	_, err = sample(cmd, env, ws)
	removeStubs(made)
	if err != nil {
		return err
	}
	got[1] = mountShape(out.String())
	if got[0] != got[1] {
		return fmt.Errorf("raw bwrap is not the same sandbox as cordon run:\ncordon:\n%s\nraw:\n%s", got[0], got[1])
	}
	fmt.Printf("equivalence: cordon run and raw bwrap see the same %d mounts\n", strings.Count(got[0], "\n"))
	return nil
}

// mountShape keeps mount point, options and fs type of each mountinfo
// line: ids and device numbers differ between any two sandboxes.
func mountShape(mi string) string {
	var b strings.Builder
	for line := range strings.Lines(mi) {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		sep := slices.Index(f, "-")
		fstype := ""
		if sep >= 0 && sep+1 < len(f) {
			fstype = f[sep+1]
		}
		fmt.Fprintf(&b, "%s %s %s\n", f[4], f[5], fstype)
	}
	return b.String()
}

func findSrt(cfg config, tmp string) string {
	if cfg.srtN <= 0 {
		return ""
	}
	for _, p := range []string{cfg.srt, os.Getenv("SRT")} {
		if p != "" {
			return p
		}
	}
	if p, err := exec.LookPath("srt"); err == nil {
		return p
	}
	if !cfg.installSrt {
		return ""
	}
	dir := filepath.Join(tmp, "srt")
	cmd := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "@anthropic-ai/sandbox-runtime")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Println("srt: npm install failed:", err)
		return ""
	}
	return filepath.Join(dir, "node_modules", ".bin", "srt")
}
