package conformance

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
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
// UnprivName without a home directory when it does not exist yet.
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
	return User{Name: pw.Username, Uid: uid, Gid: gid}, nil
}
