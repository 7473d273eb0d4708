package landlock

// InitArg is argv[1] of the landlock backend's init; argv[2] is the
// descriptor of its Spec.
const InitArg = "__cordon-landlock"

// Backend is the value of CORDON_SANDBOX inside the sandbox.
const Backend = "landlock"

// Spec is everything the init needs, as the launcher decided it. The
// environment is the init's own, passed on as it is; the working
// directory likewise.
type Spec struct {
	Plan *Plan `json:"plan"`
	// Network keeps the host's network; with it off the plan's TCP rights
	// are handled with no rule (ABI 4) and the filter refuses AF_INET,
	// AF_INET6 and AF_UNIX sockets.
	Network bool `json:"network,omitempty"`
	// ProxyPort, with the network off (Network false) and an allowlist,
	// is the port of cordon's proxy on the host's loopback: the one TCP
	// port Landlock lets the command connect to (ABI 4), the second wall
	// behind the supervisor, which connects each TCP socket itself and
	// only to the proxy (gate.ConnectRules). A port rule names no
	// host: alone it would admit that port of any host.
	ProxyPort int `json:"proxyPort,omitempty"`
	// Seccomp is the filter program (bwrap.Program); empty installs none.
	Seccomp []byte `json:"seccomp,omitempty"`
	// Gate, when not 0, is the descriptor of a Unix socket to the
	// launcher: Seccomp is then built with gate.Rules, installed with
	// a listener (gate.Install), and the listener is sent on Gate for
	// the launcher to decide the metadata calls Landlock does not cover.
	Gate int `json:"gate,omitempty"`
	// Path and Argv are the command, which the init execs in its own
	// place.
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	// Files is how many descriptors from 3 on the command inherits (the
	// caller's ExtraFiles); Closed are those among them the caller left
	// nil, closed in the command as os/exec closes them.
	Files  int   `json:"files,omitempty"`
	Closed []int `json:"closed,omitempty"`
	// Weaken names the hardening steps the init leaves out, separated by
	// commas ("landlock", "seccomp", "cap-drop", "new-session",
	// "check-paths", "keeper": the init execs the command in its own
	// place, and the sandbox outlives a killed launcher; "keeper-filter":
	// no filter of the keeper's own); only the conformance suite's mutation check sets it
	// (internal/testhook.LandlockWeaken).
	Weaken string `json:"weaken,omitempty"`
	// Probe, when set, is a directory holding a file "granted": the init
	// confines itself with Plan, which grants that file only, then
	// proves that it reads it and that creating "denied" beside it fails
	// with EACCES, and exits 0 instead of running a command (detection).
	Probe string `json:"probe,omitempty"`
}

// Encode is s as the init reads it (DecodeSpec; specwire.go).
func (s *Spec) Encode() ([]byte, error) { return encodeSpec(s), nil }

// DecodeSpec reads a spec Encode wrote.
func DecodeSpec(b []byte) (*Spec, error) { return decodeSpec(b) }
