package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// TestContainerPodman runs cordon where most users without user
// namespaces meet it: inside a real container runtime (podman with runc),
// under the runtime's default seccomp profile, as a user who is not root
// in the container. There no namespace can be made, so 'cordon detect'
// must find the landlock backend, and through it the wall must hold and
// the work must get done. Every verdict is the host's: what the files in
// the container's root and the bound workspace hold afterwards, and what
// reached a server on the host.
//
// podman here is Debian's, with three settings of the test's own
// (containers.conf): runc as the runtime (crun refuses hybrid cgroup
// layouts), cgroupfs as the cgroup manager (no systemd), and no default
// rlimits (a host that cannot raise them refuses the container). The
// container's root is a busybox-static tree (--rootfs): no image, no
// registry.
func TestContainerPodman(t *testing.T) {
	if os.Getuid() != 0 {
		testenv.NotApplicable(t, "a rootful podman needs root (the container's user is not root)")
	}
	podman, err := exec.LookPath("podman")
	testenv.Need(t, "podman (apt-get install podman runc)", err)
	_, err = exec.LookPath("runc")
	testenv.Need(t, "runc, podman's runtime here (apt-get install runc)", err)
	busybox, err := exec.LookPath("busybox")
	if err == nil {
		err = staticELF(busybox)
	}
	testenv.Need(t, "a static busybox for the container's root (apt-get install busybox-static)", err)

	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	root := podmanRootfs(t, dir, busybox)
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Chown(ws, containerUID, containerUID))
	conf := filepath.Join(dir, "containers.conf")
	require.NoError(t, os.WriteFile(conf, []byte("[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = \"cgroupfs\"\nruntime = \"runc\"\n"), 0o644))

	// Two servers on the host's loopback, which the container shares
	// (--network host): one the allowlist names, one it does not.
	allowed, other := newPodmanServer(t, "cordon-podman-allowed"), newPodmanServer(t, "cordon-podman-other")

	script := strings.Join([]string{
		`cd /work`,
		`step() { echo "@@ $1"; }`,
		`step detect; cordon detect --json 2>/dev/null; echo "@@rc $?"`,
		`step read-denied; cordon run --workspace /work -- cat /home/u/.ssh/id_ed25519; echo "@@rc $?"`,
		`step write-outside; cordon run --workspace /work -- sh -c 'echo evil > /home/u/planted'; echo "@@rc $?"`,
		`step chmod-outside; cordon run --workspace /work -- chmod 666 /home/u/.ssh/id_ed25519; echo "@@rc $?"`,
		`step work-top; cordon run --workspace /work -- sh -c 'echo hello > NEW.md && mkdir build && echo out > build/out && mv NEW.md MOVED.md && touch gone && rm gone && sed -i s/hello/edited/ MOVED.md'; echo "@@rc $?"`,
		`echo host > /tmp/host.txt`,
		`step tmp; cordon run --workspace /work -- sh -c 'echo x > /tmp/build.log && cat /tmp/build.log && d=$(mktemp -d -p /tmp) && echo y > $d/o && cat $d/o && f=$(mktemp -p /tmp) && rm $f && echo z > /tmp/host.txt'; echo "@@rc $?"`,
		`step tmp-after; cat /tmp/host.txt; ls /tmp; echo "@@rc $?"`,
		`step allowed; cordon run --workspace /work --allow-domain localhost:` + strconv.Itoa(allowed.port) +
			` -- wget -q -O - http://localhost:` + strconv.Itoa(allowed.port) + `/; echo "@@rc $?"`,
		`step refused; cordon run --workspace /work --allow-domain localhost:` + strconv.Itoa(allowed.port) +
			` -- wget -q -O - http://localhost:` + strconv.Itoa(other.port) + `/; echo "@@rc $?"`,
	}, "\n")
	cmd := exec.Command(podman, "--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "run"),
		"--runtime", "runc", "run", "--rm", "--network", "host",
		"--user", fmt.Sprintf("%d:%d", containerUID, containerUID),
		"-e", "HOME=/home/u", "-e", "PATH=/usr/local/bin:/bin",
		"-v", ws+":/work", "--rootfs", root, "/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+conf)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "podman run:\n%s", out)
	steps := podmanSteps(string(out))
	step := func(name string) podmanStep {
		s, ok := steps[name]
		if !ok {
			t.Fatalf("step %s did not run:\n%s", name, out)
		}
		return s
	}

	t.Run("detect", func(t *testing.T) {
		s := step("detect")
		var d struct {
			Backend string `json:"backend"`
			Usable  bool   `json:"usable"`
		}
		require.NoError(t, json.Unmarshal([]byte(s.out), &d), "cordon detect --json:\n%s", s.out)
		if d.Backend != "landlock" || !d.Usable || s.rc != 0 {
			t.Errorf("inside the container cordon detect found %q (usable %v, exit %d), want landlock:\n%s", d.Backend, d.Usable, s.rc, s.out)
		}
	})
	t.Run("read-denied", func(t *testing.T) {
		s := step("read-denied")
		if s.rc == 0 || strings.Contains(s.out, podmanSecret) {
			t.Errorf("the sandbox read ~/.ssh/id_ed25519 (exit %d):\n%s", s.rc, s.out)
		}
	})
	t.Run("write-outside", func(t *testing.T) {
		s := step("write-outside")
		if _, err := os.Lstat(filepath.Join(root, "home/u/planted")); err == nil || s.rc == 0 {
			t.Errorf("the sandbox wrote ~/planted outside its workspace (exit %d):\n%s", s.rc, s.out)
		}
	})
	t.Run("chmod-outside", func(t *testing.T) {
		s := step("chmod-outside")
		fi, err := os.Stat(filepath.Join(root, "home/u/.ssh/id_ed25519"))
		require.NoError(t, err)
		if fi.Mode().Perm() != 0o600 || s.rc == 0 {
			t.Errorf("the key's mode is %v after the sandbox's chmod (exit %d), want 0600:\n%s", fi.Mode().Perm(), s.rc, s.out)
		}
	})
	t.Run("work-top", func(t *testing.T) {
		s := step("work-top")
		if s.rc != 0 {
			t.Errorf("ordinary work at the workspace's top failed (exit %d):\n%s", s.rc, s.out)
		}
		for name, want := range map[string]string{"MOVED.md": "edited\n", "build/out": "out\n"} {
			b, err := os.ReadFile(filepath.Join(ws, name))
			if err != nil || string(b) != want {
				t.Errorf("host: %s holds %q (%v), want %q", name, b, err, want)
			}
		}
		for _, name := range []string{"NEW.md", "gone"} {
			if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
				t.Errorf("host: %s is still there", name)
			}
		}
	})
	t.Run("allowed", func(t *testing.T) {
		s := step("allowed")
		if s.rc != 0 || !strings.Contains(s.out, allowed.body) || allowed.hits.Load() == 0 {
			t.Errorf("the allowlisted request did not reach the host's server (exit %d, %d hits):\n%s", s.rc, allowed.hits.Load(), s.out)
		}
	})
	t.Run("tmp", func(t *testing.T) {
		// /tmp under landlock: the sandbox's own entries work, the
		// container's file there is kept, and nothing is left behind.
		s, after := step("tmp"), step("tmp-after")
		if !strings.Contains(s.out, "x\ny\n") || s.rc == 0 {
			t.Errorf("want the sandbox's /tmp files written and read, and the host's refused (exit %d):\n%s", s.rc, s.out)
		}
		if strings.TrimSpace(after.out) != "host\nhost.txt" {
			t.Errorf("the container's /tmp after the sandbox, want only its own file, unchanged:\n%s", after.out)
		}
	})
	t.Run("refused", func(t *testing.T) {
		s := step("refused")
		if s.rc == 0 || other.hits.Load() != 0 || strings.Contains(s.out, other.body) {
			t.Errorf("a port the allowlist does not name was reached (exit %d, %d hits):\n%s", s.rc, other.hits.Load(), s.out)
		}
	})
}

// containerUID is the container's user (not root).
const containerUID = 1000

// podmanSecret is the content of the container user's ssh key.
const podmanSecret = "cordon-podman-secret-key"

// podmanRootfs makes the container's root under dir: busybox and its
// applets, cordon (static), a user u (containerUID) with an ssh key.
func podmanRootfs(t *testing.T, dir, busybox string) string {
	t.Helper()
	root := filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "etc", "tmp", "proc", "dev", "sys", "work", "root", "home/u/.ssh", "usr/local/bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.Chmod(filepath.Join(root, "tmp"), 0o1777))
	copyFile(t, busybox, filepath.Join(root, "bin/busybox"), 0o755)
	for _, a := range []string{"sh", "cat", "chmod", "echo", "ls", "mkdir", "mv", "rm", "sed", "touch", "wget", "id", "env"} {
		require.NoError(t, os.Symlink("busybox", filepath.Join(root, "bin", a)))
	}
	// cordon itself, static: the container has no C library.
	bin := filepath.Join(root, "usr/local/bin/cordon")
	build := exec.Command("go", "build", "-o", bin, "github.com/cordon-sandbox/cordon/cmd/cordon")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build (static) ./cmd/cordon: %s", out)
	write := func(name, content string, mode os.FileMode) {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), mode))
	}
	write("etc/passwd", fmt.Sprintf("root:x:0:0::/root:/bin/sh\nu:x:%d:%d::/home/u:/bin/sh\n", containerUID, containerUID), 0o644)
	write("etc/group", fmt.Sprintf("root:x:0:\nu:x:%d:\n", containerUID), 0o644)
	write("home/u/.ssh/id_ed25519", podmanSecret+"\n", 0o600)
	for _, p := range []string{"home/u", "home/u/.ssh", "home/u/.ssh/id_ed25519"} {
		require.NoError(t, os.Chown(filepath.Join(root, p), containerUID, containerUID))
	}
	require.NoError(t, os.Chmod(filepath.Join(root, "home/u/.ssh"), 0o700))
	return root
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, mode))
}

// staticELF says whether the program at path needs no dynamic loader.
func staticELF(path string) error {
	out, err := exec.Command("file", "-L", path).Output()
	if err != nil {
		// Without file(1), trust the package: busybox-static installs
		// /bin/busybox static.
		return nil
	}
	if strings.Contains(string(out), "dynamically linked") {
		return fmt.Errorf("%s is dynamically linked: %s", path, strings.TrimSpace(string(out)))
	}
	return nil
}

// A podmanServer answers GET / with body on the host's loopback and counts
// what reached it.
type podmanServer struct {
	port int
	body string
	hits atomic.Int64
}

func newPodmanServer(t *testing.T, body string) *podmanServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &podmanServer{port: ln.Addr().(*net.TCPAddr).Port, body: body}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		fmt.Fprintln(w, s.body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// podmanStep is what one step of the container's script printed, and its
// exit status.
type podmanStep struct {
	out string
	rc  int
}

// podmanSteps splits the script's output at its "@@ NAME" and "@@rc N"
// lines.
func podmanSteps(out string) map[string]podmanStep {
	steps := map[string]podmanStep{}
	var name string
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "@@rc "):
			rc, _ := strconv.Atoi(strings.TrimPrefix(line, "@@rc "))
			if name != "" {
				steps[name] = podmanStep{out: b.String(), rc: rc}
			}
			name = ""
			b.Reset()
		case strings.HasPrefix(line, "@@ "):
			name = strings.TrimPrefix(line, "@@ ")
			b.Reset()
		default:
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return steps
}
