package gate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// hostDecider hands over the host sockets whose identities it holds.
type hostDecider struct {
	entryDecider
	ids [][2]uint64
}

func (d hostDecider) HostSocket(dev, ino uint64) bool {
	for _, id := range d.ids {
		if id == [2]uint64{dev, ino} {
			return true
		}
	}
	return false
}

// TestGateUnixHostSocket runs a child under a landlock sandbox's Unix
// socket gate with one host socket handed over (gate.HostSockets): it
// reaches that socket by its name and through a link, not the host
// socket beside it; and when the other socket is renamed over the name
// at the moment the gate has checked and pinned the one handed over
// (testhook.GateUnixConnect), the connect still reaches the one checked.
// Judged by the host's listeners.
func TestGateUnixHostSocket(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	in := func(n string) string { return filepath.Join(dir, n) }
	named := hostListener(t, in("named.sock"))
	other := hostListener(t, in("other.sock"))
	require.NoError(t, os.Symlink(in("named.sock"), in("link.sock")))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(in("named.sock"), &st))
	testhook.GateUnixConnect = func(_ int, name string) {
		if name == in("swap.sock") {
			// Checked and pinned: the other socket takes the name now.
			require.NoError(t, os.Rename(in("other.sock"), in("swap.sock")))
		}
	}
	t.Cleanup(func() { testhook.GateUnixConnect = nil })
	yes := func(string, bool) bool { return true }
	d := hostDecider{entryDecider{Funcs: gate.Funcs{Change: yes, Read: yes}, entries: entries{allowed: dir}},
		[][2]uint64{{st.Dev, st.Ino}}}
	// swap.sock is the handed-over socket by another name (a hard link)
	// until the rename.
	require.NoError(t, os.Link(in("named.sock"), in("swap.sock")))
	out := runUnderUnixGateT(t, "TestHelperUnixHostSocket", dir, d)
	t.Logf("child:\n%s", out)
	for _, want := range []string{"result named 0", "result link 0", fmt.Sprintf("result other %d", unix.EACCES), "result swap 0"} {
		require.Contains(t, out, want+"\n")
	}
	_, err := os.Lstat(in("other.sock"))
	require.True(t, os.IsNotExist(err), "the swap did not happen: %v", err)
	require.Equal(t, 3, named(), "the socket handed over: by name, through a link, and the pinned one at the swap")
	require.Zero(t, other(), "the host socket not handed over was reached")
}

func TestHelperUnixHostSocket(t *testing.T) {
	dir := testenv.InSubprocess(t)
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	l, err := gate.Install(bwrap.Program(unixRules()))
	if err != nil {
		fmt.Printf("install failed: %v\n", err)
		return
	}
	if err := gate.SendFd(3, l); err != nil {
		t.Fatal(err)
	}
	unix.Close(l)
	unix.Close(3)
	for _, n := range []string{"named", "link", "other", "swap"} {
		c, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		var e unix.Errno
		if err := unix.Connect(c, &unix.SockaddrUnix{Name: filepath.Join(dir, n+".sock")}); err != nil {
			e = err.(unix.Errno)
		}
		fmt.Printf("result %s %d\n", n, int(e))
		unix.Close(c)
	}
}
