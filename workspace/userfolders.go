package workspace

import (
	"path/filepath"
	"regexp"
)

// macOS gives each user a directory /private/var/folders/<xx>/<yyy>/ whose
// T is the user's temp folder (confstr _CS_DARWIN_USER_TEMP_DIR, the
// TMPDIR a login session gets) and C the user's cache folder
// (_CS_DARWIN_USER_CACHE_DIR). xcrun, clang, swift and much of Apple's
// tooling write there through confstr, whatever TMPDIR says; under
// restrictWrites every such tool would fail. The workspace preset on macOS
// therefore makes T and C writable, and keeps read-only what host tools
// there obey without checking (userFolderProtected). See docs/design.md.
var userTempDir = regexp.MustCompile(`^/private/var/folders/[^/]+/[^/]+/T$`)

// userFolderProtected are files in T that a host tool later trusts: xcrun's
// cache of where each developer tool lives, read by every /usr/bin shim
// (git, clang, make, …); a sandbox that wrote it could make the user's next
// `git` on the host run a program of its choosing.
var userFolderProtected = []string{"xcrun_db"}

// userFolders returns the writable T and C folders and the read-only
// protections in them, given the temp folder t the system reports
// (resolved, so /var/folders is /private/var/folders). isPrivateDir tells a
// directory owned by the user and writable by nobody else; both folders
// must pass, and t must have the shape above, or nothing is returned:
// TMPDIR is the user's to set and may point anywhere.
func userFolders(t string, isPrivateDir func(string) bool) (writable, readonly []string) {
	t = filepath.Clean(t)
	if !userTempDir.MatchString(t) || !isPrivateDir(t) {
		return nil, nil
	}
	writable = []string{t}
	if c := filepath.Join(filepath.Dir(t), "C"); isPrivateDir(c) {
		writable = append(writable, c)
	}
	for _, n := range userFolderProtected {
		readonly = append(readonly, filepath.Join(t, n))
	}
	return writable, readonly
}
