package seatbelt_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/scale"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/seatbelt"
)

// apply runs /usr/bin/true under prof with the real sandbox-exec, the way
// a launch does (profile file, -D parameters), and returns what it said.
func apply(t *testing.T, prof *seatbelt.Profile) (string, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "p.sb")
	require.NoError(t, os.WriteFile(f, []byte(prof.SBPL), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := prof.Argv(f, []string{"/usr/bin/true"})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

func render(t *testing.T, p policy.FsSandboxPolicy, opt seatbelt.Options) *seatbelt.Profile {
	t.Helper()
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	prof, err := seatbelt.Render(c, opt)
	require.NoError(t, err)
	return prof
}

// TestCompilesOnThisMac is the check the macOS CI leg exists for: every
// profile shape cordon emits compiles and applies on this release, and a
// policy of 2,000 roots under a long base (the split rules) does too.
func TestCompilesOnThisMac(t *testing.T) {
	testenv.RequireBackend(t, "seatbelt")
	version, _ := syscall.Sysctl("kern.osproductversion")
	t.Logf("macOS %s", version)

	probe, err := seatbelt.ProbeProfile()
	require.NoError(t, err)
	long := "/Users/cordon-scale/" + strings.Repeat("deep-monorepo-path/", 3)[:44]
	for name, prof := range map[string]*seatbelt.Profile{
		"probe":            probe,
		"network on":       render(t, seatbelt.ProbePolicy(), seatbelt.Options{Network: true}),
		"empty":            render(t, policy.FsSandboxPolicy{}, seatbelt.Options{}),
		"2000 roots, long": render(t, scale.Policy2000(long), seatbelt.Options{}),
	} {
		said, err := apply(t, prof)
		require.NoError(t, err, "%s: sandbox-exec refused the profile on macOS %s: %s", name, version, said)
	}
}

// TestReleaseFacts records, without failing, the two facts the renderer's
// choices rest on, so the CI log of each runner says what that release
// does: a symbolic TIOCSTI, and one rule past 65,535 bytes of paths.
func TestReleaseFacts(t *testing.T) {
	testenv.RequireBackend(t, "seatbelt")
	version, _ := syscall.Sysctl("kern.osproductversion")
	prof := render(t, policy.FsSandboxPolicy{}, seatbelt.Options{})
	sym := *prof
	sym.SBPL = strings.Replace(prof.SBPL, "(ioctl-command 2147578994)", "(ioctl-command TIOCSTI)", 1)
	said, err := apply(t, &sym)
	t.Logf("macOS %s, symbolic TIOCSTI: err=%v said=%q", version, err, strings.TrimSpace(said))

	long := "/Users/cordon-scale/" + strings.Repeat("deep-monorepo-path/", 3)[:44]
	restore := seatbelt.SetRuleBudget(1 << 30)
	unsplit := render(t, scale.Policy2000(long), seatbelt.Options{})
	restore()
	said, err = apply(t, unsplit)
	t.Logf("macOS %s, one rule of ~200 KB of paths: err=%v said=%q", version, err, strings.TrimSpace(said))
}
