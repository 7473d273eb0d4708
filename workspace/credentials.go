package workspace

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/closeddir"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// The credential stores the workspace preset denies, and the homes they
// are looked up under.

// storeHomes are the homes whose credential stores the preset denies:
// home ($HOME, resolved; "" when there is none) and the user's home from
// the password database (userHome, "" to look it up), each once.
func storeHomes(r *policy.Resolver, home, userHome string) []string {
	var out []string
	if home != "" {
		out = append(out, home)
	}
	if userHome == "" {
		userHome = UserHome()
	}
	if filepath.IsAbs(userHome) {
		if h, err := r.Resolve(userHome); err == nil && h != "/" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// UserHome is the current user's home directory as the password database
// names it, "" when it names none: unlike $HOME, nothing the caller's
// environment says changes it.
func UserHome() string {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil || !filepath.IsAbs(u.HomeDir) {
		return ""
	}
	return filepath.Clean(u.HomeDir)
}

// credentials lists the credential stores under home to deny: those that
// exist, and those a sandbox could create because a writable root contains
// them. A store that is the workspace itself, or named in allow, stays open.
// One that cannot be looked up inside the workspace (a directory on its way
// closed to this user, which a sandbox could open again) fails the launch.
func credentials(r *policy.Resolver, home, ws string, allow, own []string) ([]string, error) {
	allowed := map[string]bool{}
	for _, a := range allow {
		if ra, err := r.Resolve(a); err == nil {
			allowed[ra] = true
		}
	}
	var out []string
	for _, n := range CredentialStores {
		if slices.Contains(own, n) {
			continue
		}
		lexical := filepath.Join(home, n)
		p, err := r.Resolve(lexical)
		if err != nil && within(lexical, ws) && !testhook.ClosedUnchecked {
			return nil, fmt.Errorf("cannot deny the credential store %s: %s; it lies in the workspace, where a sandbox can close a directory of its own to hide it from this check and open it again inside", lexical, closeddir.Hint(lexical, err))
		}
		if err != nil || allowed[p] || p == ws {
			continue
		}
		if exists, _, err := r.Lookup(p); (err == nil && exists) || within(p, ws) {
			out = append(out, p)
		}
	}
	return out, nil
}

// notStores notes each of allow that names no credential store under
// home: --allow-read opens only those, so it changes nothing there.
func notStores(r *policy.Resolver, homes []string, allow []string) []string {
	stores := map[string]bool{}
	for _, home := range homes {
		for _, n := range CredentialStores {
			if p, err := r.Resolve(filepath.Join(home, n)); err == nil {
				stores[p] = true
			}
		}
	}
	home := strings.Join(homes, " and ")
	var notes []string
	for _, a := range allow {
		if p, err := r.Resolve(a); err != nil || !stores[p] {
			notes = append(notes, fmt.Sprintf("--allow-read %s changes nothing: it opens only the credential stores cordon denies (%s, under %s)", a, strings.Join(CredentialStores, ", "), home))
		}
	}
	return notes
}

// within reports whether p equals root or lies below it.
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}
