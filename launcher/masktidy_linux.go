package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// Masks (masks_linux.go) are shared by content and cost nothing to make
// again, but nothing used to remove one. A workspace's mask has a shape
// of its own (its private TMPDIR is a root inside cordon's state
// directory, which is denied), so a user kept one per workspace ever
// launched, and a test run here left about 900 (fixtures have random
// names).
//
// Removing a mask that a running sandbox has mounted is not harmless:
// the kernel lets a directory be removed while it is a mount point in
// another mount namespace, and detaches what is mounted on it there (the
// readable root inside a denied directory vanishes from the running
// sandbox).
//
// So every launch that mounts a mask touches it (ensureMasks), and the
// tidy removes only a mask that no launch has touched for maskKeep and
// that no mount namespace it can look at mounts (every one for root, the
// user's own otherwise; the masks are per user). A sandbox that runs for
// longer than maskKeep keeps its masks by the second check. Nothing
// else is recorded: no file per launch, no lock to hold while the
// sandbox runs.
//
// It runs once per maskTidyEvery and per user, for at most maskTidyBudget:
// a mask is renamed aside (each a few microseconds), then removed, within
// the same budget (a mask is a few empty directories).
var (
	maskKeep       = 24 * time.Hour
	maskTidyEvery  = 24 * time.Hour
	maskTidyBudget = 100 * time.Millisecond
	maskTidyMax    = 10000
)

// maskTrash starts the names of masks being removed.
const maskTrash = ".gone-"

// tidyMasks removes the masks under root that no launch touched within
// maskKeep before now, and what earlier tidies or killed launches left
// there, once per maskTidyEvery. It returns the names it set aside.
func tidyMasks(root string, now time.Time) []string {
	if !state.Due(root, now, maskTidyEvery) {
		return nil
	}
	d, err := os.Open(root)
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(maskTidyMax)
	d.Close()
	var gone, trash, old []string
	end := time.Now().Add(maskTidyBudget)
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, maskTrash):
			trash = append(trash, n)
		case isMaskName(n) || strings.HasPrefix(n, "build-"):
			if madeBefore(filepath.Join(root, n), now.Add(-maskKeep)) {
				old = append(old, n)
			}
		}
	}
	// The second wall: a mask some mount namespace mounts stays, however
	// long ago it was touched (a sandbox that has run for days).
	keys := map[string]bool{}
	for _, n := range old {
		keys[n] = true
	}
	mounted := mountedMasks(root, keys)
	for _, n := range old {
		if time.Now().After(end) {
			break // the rest at the next tidy
		}
		if mounted[n] {
			continue
		}
		var r [6]byte
		rand.Read(r[:])
		t := maskTrash + n + "-" + hex.EncodeToString(r[:])
		// Within the same directory: a directory moved to another would
		// need write permission on itself, which a mask has not.
		if os.Rename(filepath.Join(root, n), filepath.Join(root, t)) == nil {
			gone = append(gone, n)
			trash = append(trash, t)
		}
	}
	// Removed here, not beside the sandbox: a launch that hands its
	// process to bwrap, or ends, would take a goroutine's work with it,
	// and the stamp says done for a day. A mask is a few empty
	// directories; what the budget leaves goes at the next tidy.
	for _, t := range trash {
		if time.Now().After(end) {
			break
		}
		removeMask(filepath.Join(root, t))
	}
	return gone
}

// isMaskName reports whether n is named as bwrap's masks are: 24
// lower-case hexadecimal digits, or "empty".
func isMaskName(n string) bool {
	if n == "empty" {
		return true
	}
	if len(n) != 24 {
		return false
	}
	for _, c := range n {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// madeBefore reports whether p is a directory of ours whose modification
// and change times are both before t.
func madeBefore(p string, t time.Time) bool {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() {
		return false
	}
	return time.Unix(st.Mtim.Unix()).Before(t) && time.Unix(st.Ctim.Unix()).Before(t)
}
