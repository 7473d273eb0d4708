package conformance

import "strconv"

// A sandbox's own Unix sockets (docs/threat-model.md, "Unix sockets"):
// the work a program does with sockets it made, in the workspace and
// under TMPDIR, with the network off and with an allowlist, beside the
// host's sockets it must not reach, judged by the host's listeners.
// On every Linux backend: landlock's gate records what it binds; native
// and bwrap's gate admits a socket bound in the sandbox's own network
// namespace.

// unixWork is the Python the cases run: a multiprocessing manager
// sharing a dict, a server and client on a socket in the project and
// one under TMPDIR, a FIFO, and each host socket named in argv, which
// must be refused.
const unixWork = `import multiprocessing as mp, os, socket, sys, tempfile
def work(d):
    d["x"] = 1
def pair(path, mark):
    if os.path.lexists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen()
    c = socket.socket(socket.AF_UNIX); c.connect(path); a, _ = s.accept()
    c.sendall(b"hi")
    if a.recv(2) == b"hi" and s.getsockname() == path:
        print("@@" + mark + "@@")
if __name__ == "__main__":
    m = mp.Manager(); d = m.dict()
    p = mp.Process(target=work, args=(d,)); p.start(); p.join()
    if d.get("x") == 1:
        print("@@" + "MANAGER" + "@@")
    pair("run/app.sock", "PROJECT")
    pair(os.path.join(tempfile.gettempdir(), "t.sock"), "TMPDIR")
    os.mkfifo("run/fifo")
    if os.fork() == 0:
        open("run/fifo", "w").write("f"); os._exit(0)
    if open("run/fifo").read() == "f":
        print("@@" + "FIFO" + "@@")
    for i, h in enumerate(sys.argv[1:]):
        try:
            socket.socket(socket.AF_UNIX).connect(h); print("@@" + "HOST%d" % i + "@@")
        except OSError:
            pass
    for t in (socket.SOCK_DGRAM,):
        try:
            socket.socket(socket.AF_UNIX, t); print("@@" + "DGRAM" + "@@")
        except OSError:
            pass
`

func unixCases() []Case {
	var cases []Case
	for _, mode := range []string{"off", "allowlist"} {
		cases = append(cases, Case{Name: "unix-own-sockets-" + mode, Class: Network, Needs: []string{"python3"},
			Backends: linuxOnly,
			Summary: "network " + mode + ": a multiprocessing manager, a server and client on a socket in the project and under TMPDIR, and a FIFO work; " +
				"a host process's socket left in the writable workspace, one outside, and a link to one are refused",
			Run: func(h *H) {
				_, p := h.ws()
				if mode == "allowlist" {
					s := h.NetServer("127.0.0.1:0")
					p.AllowDomains = []string{"localhost:" + strconv.Itoa(s.Port)}
				}
				h.Mkdir("ws/run")
				h.Mkdir("outside")
				h.Write("ws/unixwork.py", unixWork)
				inWs := h.Listen(h.Path("ws/run/host.sock"))
				outside := h.Listen(h.Path("outside/agent.sock"))
				o := h.Sandbox(p, `ln -s "$O" run/agent.link
python3 unixwork.py "$W" "$O" run/agent.link`, "W="+h.Path("ws/run/host.sock"), "O="+h.Path("outside/agent.sock"))
				h.Expect(o, "MANAGER", "PROJECT", "TMPDIR", "FIFO")
				h.Refuse(o, "HOST0", "HOST1", "HOST2", "DGRAM")
				if n := inWs() + outside(); n > 0 {
					h.Errorf("host: its sockets accepted %d connection(s) from inside the sandbox:\n%s", n, o)
				}
			}})
	}
	return cases
}
