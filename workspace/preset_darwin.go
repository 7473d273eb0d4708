package workspace

import (
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/policy"
)

// platformRoots adds the user's temp and cache folders to the workspace
// preset (see userFolders). They are found the way macOS finds them, but
// without cgo, which confstr would need: first TMPDIR, which launchd sets
// to the temp folder for every login session, then, when TMPDIR is unset
// or points elsewhere, `getconf DARWIN_USER_TEMP_DIR`, which asks confstr.
// Either answer counts only if it has the temp folder's shape and owner.
func platformRoots(r *policy.Resolver) (writable, readonly []string) {
	for _, find := range []func() string{
		func() string { return os.Getenv("TMPDIR") },
		func() string {
			out, err := exec.Command("/usr/bin/getconf", "DARWIN_USER_TEMP_DIR").Output()
			if err != nil {
				return ""
			}
			return strings.TrimSpace(string(out))
		},
	} {
		t := find()
		if t == "" {
			continue
		}
		rt, err := r.Resolve(strings.TrimRight(t, "/"))
		if err != nil {
			continue
		}
		if w, ro := userFolders(rt, isPrivateDir); w != nil {
			return w, ro
		}
	}
	return nil, nil
}

// isPrivateDir reports a real directory owned by the current user that no
// one else may write.
func isPrivateDir(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
