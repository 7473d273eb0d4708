package conformance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// TestMain removes the binary cordonBinary built: nothing else would.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// cordonBinary builds cmd/cordon once per test binary into a directory
// every user can read: the suite runs it as 'cordon run' and as the
// attack helper, also as the unprivileged user.
func cordonBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp(FixtureParent(), "cordon-conformance-bin-") // outside the private /tmp, as fixtures are
		if buildErr != nil {
			return
		}
		os.Chmod(buildDir, 0o755)
		out, err := exec.Command("go", "build", "-o", filepath.Join(buildDir, "cordon"), "github.com/cordon-sandbox/cordon/cmd/cordon").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, string(out)}
		}
	})
	require.NoError(t, buildErr, "go build ./cmd/cordon")
	return filepath.Join(buildDir, "cordon")
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// users are the users the suite runs as: the invoker and, as root on
// Linux, the unprivileged user (a skip through testenv when it cannot be
// had).
func users(t *testing.T) []User {
	us := []User{Invoker()}
	if os.Getuid() == 0 && runtime.GOOS == "linux" {
		u, err := Unprivileged()
		testenv.Need(t, "an unprivileged user to run the catalogue as", err)
		us = append(us, u)
	}
	return us
}

// newBase makes a fixture base directory for users, removed at the end.
func newBase(t *testing.T, us []User) string {
	t.Helper()
	base, err := os.MkdirTemp(FixtureParent(), "cordon-conformance-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	_, err = Base(base, us, "")
	require.NoError(t, err)
	return base
}

// TestCatalogue runs every case through 'cordon run', one subtest per user
// and case, exactly as 'cordon verify' does.
func TestCatalogue(t *testing.T) {
	catalogue(t, testenv.RequireBackend(t, testenv.NativeBackend()))
}

// TestCatalogueNative runs the whole catalogue again through cordon's own
// Linux backend (package native), as both users.
func TestCatalogueNative(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.NotApplicable(t, "the native backend is Linux's")
	}
	catalogue(t, testenv.RequireBackend(t, "native"))
}

// TestCatalogueLandlock runs the whole catalogue through the landlock
// backend, as both users, with 'cordon run' started where no user
// namespace can be made, as in a container under Docker's default seccomp
// profile: a bwrap whose user namespace forbids nested ones (the
// namespace is bwrap's, outside cordon; inside it root is uid 0 of the
// host's files, as in a container).
func TestCatalogueLandlock(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.NotApplicable(t, "the landlock backend is Linux's")
	}
	res := testenv.RequireBackend(t, "landlock")
	// Where this host already refuses user namespaces (Ubuntu's AppArmor
	// without the sysctl, a container), cordon runs as it is; elsewhere
	// inside a wrap that refuses them.
	var wrap []string
	if exec.Command("unshare", "--user", "true").Run() == nil {
		wrap = NoUsernsWrap()
	}
	catalogue(t, res, wrap...)
}

// NoUsernsWrap is the command line the landlock suite runs 'cordon run'
// inside: a process that cannot create user namespaces.
func NoUsernsWrap() []string {
	return []string{"bwrap", "--unshare-user", "--disable-userns", "--die-with-parent", "--dev-bind", "/", "/", "--"}
}

func catalogue(t *testing.T, res detect.Result, wrap ...string) {
	bin := cordonBinary(t)
	us := users(t)
	base := newBase(t, us)
	x := &Binary{Path: bin, BackendName: res.Backend, Wrap: wrap}
	for _, u := range us {
		if len(wrap) == 0 {
			break
		}
		// The wrap itself, as each user: it runs a program and forbids it
		// user namespaces, or the suite would prove nothing.
		run := func(argv ...string) ([]byte, error) {
			cmd := exec.Command(wrap[0], append(wrap[1:len(wrap):len(wrap)], argv...)...)
			if !u.Invoker {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.Uid), Gid: uint32(u.Gid), Groups: []uint32{}}}
			}
			return cmd.CombinedOutput()
		}
		_, err := run("true")
		testenv.Need(t, "a process that cannot create user namespaces ("+strings.Join(wrap, " ")+")", err)
		out, err := run("unshare", "--user", "true")
		require.Error(t, err, "as %s, %v still lets a process create a user namespace: %s", u.Name, wrap, out)
	}
	cases := Catalogue()
	rm := backgroundRemover(t)
	for _, u := range us {
		t.Run(u.Name, func(t *testing.T) {
			for i := range cases {
				c := &cases[i]
				t.Run(c.Name, func(t *testing.T) {
					if ran := firstBackend(c, u, res.Backend); ran != res.Backend {
						testenv.NotApplicable(t, "run through "+ran+" in this run: "+c.OneBackend)
					}
					t.Parallel()
					dir := filepath.Join(base, c.Name+"."+u.Name)
					r := RunCase(context.Background(), x, u, c, dir, cacheDir(base, u))
					rm(dir)
					switch r.Outcome {
					case Fail:
						t.Errorf("%s (class %s): %s\n%s", c.Name, c.Class, c.Summary, r.Detail)
					case NotApplicable:
						testenv.NotApplicable(t, r.Detail)
					}
				})
			}
		})
	}
}

// oneBackend maps a case of Case.OneBackend and a user to the backend
// that took it in this process.
var oneBackend = struct {
	sync.Mutex
	took map[string]string
}{took: map[string]string{}}

// firstBackend returns the backend that runs c as u in this process:
// backend itself, unless c needs only one and another took it first. The
// catalogue tests run one after another, so which one that is follows
// from the tests selected, never from timing.
func firstBackend(c *Case, u User, backend string) string {
	if c.OneBackend == "" {
		return backend
	}
	oneBackend.Lock()
	defer oneBackend.Unlock()
	k := c.Name + "\x00" + u.Name
	if b, ok := oneBackend.took[k]; ok {
		return b
	}
	oneBackend.took[k] = backend
	return backend
}

// backgroundRemover returns a function that removes a case's directory
// beside the cases still running; the removals end before t does. One
// case's directory holds 50,001 (cross-launch-scan-bound), whose removal
// waits on the disk for seconds (up to 20 on this 2-core VM's ext4): done
// in the case, it held one of the two parallel slots meanwhile.
func backgroundRemover(t *testing.T) func(dir string) {
	dirs := make(chan string, 1<<14)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range dirs {
			RemoveFixture(d)
		}
	}()
	t.Cleanup(func() {
		close(dirs)
		<-done
	})
	return func(dir string) {
		select {
		case dirs <- dir:
		default:
			RemoveFixture(dir) // never expected: the queue holds every case twice over
		}
	}
}

// TestCatalogueShape keeps the catalogue honest: unique names, every class
// of docs/threat-model.md covered, at least 40 escape attempts.
func TestCatalogueShape(t *testing.T) {
	seen := map[string]bool{}
	perClass := map[Class]int{}
	attacks := 0
	findings, err := os.ReadFile("FINDINGS.md")
	require.NoError(t, err)
	for _, c := range Catalogue() {
		// A backend a case is open with names the finding that says why.
		for b, why := range c.Open {
			m := regexp.MustCompile(`FINDINGS\.md (F[0-9]+)`).FindStringSubmatch(why)
			require.NotNil(t, m, "%s: open with %s names no finding: %s", c.Name, b, why)
			require.Contains(t, string(findings), "## "+m[1]+" ", "%s: %s is not in FINDINGS.md", c.Name, m[1])
		}
		require.False(t, seen[c.Name], "duplicate case %s", c.Name)
		seen[c.Name] = true
		require.NotEmpty(t, c.Summary, c.Name)
		require.NotNil(t, c.Run, c.Name)
		perClass[c.Class]++
		if c.Class >= 1 && c.Class <= 10 {
			attacks++
		}
	}
	for cl := Class(1); cl <= 10; cl++ {
		require.NotZero(t, perClass[cl], "no case for class %s", cl)
	}
	require.NotZero(t, perClass[Work], "no ordinary-work case")
	require.NotZero(t, perClass[Kernel], "no case for class %s", Kernel)
	require.NotZero(t, perClass[Model], "no model case")
	require.GreaterOrEqual(t, attacks, 40)
	t.Logf("cases per class: %v (%d escape attempts)", perClass, attacks)
}
