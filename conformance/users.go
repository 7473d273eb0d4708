package conformance

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// User is a user cases run as.
type User struct {
	Name     string
	Uid, Gid int
	// Invoker is the user running the suite; the others get credentials
	// set on the child that launches the sandbox.
	Invoker bool
}

func (u User) root() bool { return u.Uid == 0 }

// UnprivName is the account the suite creates (useradd -M -r) when run as
// root and no such account exists.
const UnprivName = "cordon-verify"

// Invoker is the user running the suite.
func Invoker() User {
	u := User{Name: strconv.Itoa(os.Getuid()), Uid: os.Getuid(), Gid: os.Getgid(), Invoker: true}
	if pw, err := user.LookupId(u.Name); err == nil {
		u.Name = pw.Username
	}
	return u
}

// Unprivileged returns the unprivileged user root's runs add, creating
// UnprivName when it does not exist yet, and its home directory (0700,
// its own) when the password database names one that is missing: a real
// user has a home, and the cases about the home the password database
// names (direct-token-files-real-home) judge it.
func Unprivileged() (User, error) {
	if os.Getuid() != 0 {
		return User{}, errors.New("only root can run cases as another user")
	}
	pw, err := user.Lookup(UnprivName)
	if err != nil {
		out, err := exec.Command("useradd", "-M", "-r", "-s", "/usr/sbin/nologin", "-c", "cordon verify", UnprivName).CombinedOutput()
		if err != nil {
			return User{}, fmt.Errorf("useradd %s: %v: %s", UnprivName, err, strings.TrimSpace(string(out)))
		}
		if pw, err = user.Lookup(UnprivName); err != nil {
			return User{}, fmt.Errorf("user %s: %w", UnprivName, err)
		}
	}
	uid, err1 := strconv.Atoi(pw.Uid)
	gid, err2 := strconv.Atoi(pw.Gid)
	if err1 != nil || err2 != nil || uid == 0 {
		return User{}, fmt.Errorf("user %s: unusable uid %q gid %q", UnprivName, pw.Uid, pw.Gid)
	}
	if err := ownHome(pw.HomeDir, uid, gid); err != nil {
		return User{}, fmt.Errorf("user %s: %w", UnprivName, err)
	}
	return User{Name: pw.Username, Uid: uid, Gid: gid}, nil
}

// ownHome makes home (a directory directly beneath an existing,
// root-owned parent such as /home) when it is missing; any other home is
// left as it is.
func ownHome(home string, uid, gid int) error {
	if !filepath.IsAbs(home) || filepath.Clean(home) != home || filepath.Dir(home) == "/" || home == "/" {
		return nil
	}
	if _, err := os.Lstat(home); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if fi, err := os.Lstat(filepath.Dir(home)); err != nil || !fi.IsDir() {
		return nil
	} else if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
		return nil
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		return fmt.Errorf("make its home: %w", err)
	}
	if err := os.Lchown(home, uid, gid); err != nil {
		os.Remove(home)
		return fmt.Errorf("give it its home: %w", err)
	}
	return nil
}
