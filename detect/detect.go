package detect

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what detection found for one backend.
type Result struct {
	Backend string `json:"backend"` // "bwrap" | "seatbelt" | "none"
	Path    string `json:"path"`    // absolute, trusted path of the backend binary ("" if none)
	Version string `json:"version"`
	Usable  bool   `json:"usable"`
	Reason  string `json:"reason"`           // why unusable (with the fix), or a short "ok: ..." note
	Nested  bool   `json:"nested,omitempty"` // already inside a cordon sandbox (CORDON_SANDBOX set)
	// BindFD reports that bwrap can bind a root from a descriptor
	// (--bind-fd, upstream 0.10, backported to some distributions' 0.8):
	// the launcher then binds the very directories it checked.
	BindFD bool `json:"bindFD,omitempty"`
	// Landlock says which Landlock ABI a native sandbox is confined with,
	// or that it runs with one wall (native.LandlockStatus); for the
	// landlock backend, the ABI it found.
	Landlock string `json:"landlock,omitempty"`
	// Fallback: auto took the landlock backend because neither namespace
	// backend is usable here (Reason says why); cordon run says so once.
	Fallback bool `json:"fallback,omitempty"`
}

// Environment variables detection reads.
const (
	EnvSandbox  = "CORDON_SANDBOX"   // set inside every cordon sandbox
	EnvBwrap    = "CORDON_BWRAP"     // absolute path overriding the trusted bwrap list
	EnvProbeLog = "CORDON_PROBE_LOG" // file that gets one line per real probe
)

// probeTimeout bounds one probe. A healthy one takes milliseconds; the
// margin is for a machine under heavy load, where a spurious "unusable"
// would make every launch fail closed.
const probeTimeout = 15 * time.Second

var (
	probes atomic.Int64

	mu      sync.Mutex
	results = map[string]Result{} // in-process cache by concrete backend
)

// Probes returns how many real probes this process has executed.
func Probes() int { return int(probes.Load()) }

// resolve maps "auto" to this OS's only backend; on Linux auto chooses
// between two (autoLinux), and this is bwrap, the fallback.
func resolve(backend string) string {
	if backend != "auto" && backend != "" {
		return backend
	}
	switch runtime.GOOS {
	case "linux":
		return "bwrap"
	case "darwin":
		return "seatbelt"
	}
	return "none"
}

// Nested reports whether this process runs inside a sandbox cordon
// launched (the sentinel, verified on Linux as Detect does), and which
// backend's.
func Nested() (backend string, ok bool) {
	r, ok := nested()
	return r.Backend, ok
}

// nested reports the sentinel the launcher sets inside every sandbox.
func nested() (Result, bool) {
	v := os.Getenv(EnvSandbox)
	if v == "" { // an empty value is how a caller clears an inherited sentinel
		return Result{}, false
	}
	// Anyone can set a variable; only a real sandbox can make bwrap pid 1.
	// On Linux an unverified sentinel is ignored, so the command gets
	// wrapped; a value naming another backend cannot be true there.
	if runtime.GOOS == "linux" && !((v == "bwrap" && insideBwrap()) || (v == "native" && insideNative()) ||
		(v == "landlock" && insideLandlock())) {
		return Result{}, false
	}
	return Result{
		Backend: v,
		Usable:  true,
		Nested:  true,
		Reason: fmt.Sprintf("already inside a cordon sandbox (%s=%s); the outer sandbox confines this process, so cordon does not wrap it again",
			EnvSandbox, v),
	}, true
}

// Detect returns the result for backend ("auto", "bwrap", "native",
// "landlock" or "seatbelt"; auto is, on Linux, native where usable, else
// bwrap, else landlock), probing only when neither this process nor the
// disk cache has a result whose key still matches the host.
func Detect(ctx context.Context, backend string) Result {
	if r, ok := nested(); ok {
		return r
	}
	if (backend == "auto" || backend == "") && runtime.GOOS == "linux" {
		return autoLinux(func(b string) Result { return Detect(ctx, b) })
	}
	b := resolve(backend)
	mu.Lock()
	defer mu.Unlock() // held across the probe so concurrent callers probe once
	if r, ok := results[b]; ok {
		return r
	}
	k, keyed := currentKey(b)
	if keyed {
		if r, ok := loadCache(b, k); ok {
			results[b] = r
			return r
		}
	}
	r := probe(ctx, b)
	if ctx.Err() != nil {
		return r // an interrupted probe says nothing about the host
	}
	results[b] = r
	if keyed {
		storeCache(b, k, r)
	}
	return r
}

// autoLinux is auto on Linux: cordon's own init (native) wherever it is
// usable, else bubblewrap, as get (cached or fresh) finds them. bwrap
// resolves its bind sources following links before it builds the sandbox,
// so a concurrent sandbox's swap can redirect one
// (conformance/FINDINGS.md F8); the native init opens each without
// following a link. Where neither namespace backend is usable (a
// container, a CI runner, AppArmor's restriction), landlock, which needs
// none, and the reason says why it was taken. When none is usable, the
// reason names all three.
func autoLinux(get func(backend string) Result) Result {
	n := get("native")
	if n.Usable {
		return n
	}
	b := get("bwrap")
	if b.Usable {
		return b
	}
	l := get("landlock")
	if l.Usable {
		l.Reason = "user namespaces are unavailable here (native: " + n.Reason + "; bwrap: " + b.Reason +
			"); landlock confines without them: " + l.Reason
		l.Fallback = true
		return l
	}
	b.Reason += "; and the native backend: " + n.Reason + "; and the landlock backend: " + l.Reason
	return b
}

// Probe always runs the real probe; it neither reads nor writes a cache.
// For auto it probes what Detect would choose.
func Probe(ctx context.Context, backend string) Result {
	if r, ok := nested(); ok {
		return r
	}
	if (backend == "auto" || backend == "") && runtime.GOOS == "linux" {
		return autoLinux(func(b string) Result { return probe(ctx, b) })
	}
	return probe(ctx, resolve(backend))
}

func probe(ctx context.Context, backend string) Result {
	switch backend {
	case "bwrap", "seatbelt", "native", "landlock":
	case "none":
		return Result{Backend: "none", Reason: "no sandbox backend: commands would run unconfined; cordon run needs an explicit --backend none for that"}
	default:
		return Result{Backend: "none", Reason: fmt.Sprintf("unknown backend %q; want auto, bwrap, native, landlock or seatbelt", backend)}
	}
	start := time.Now()
	var r Result
	switch backend {
	case "bwrap":
		r = probeBwrap(ctx)
	case "native":
		r = probeNative(ctx)
	case "landlock":
		r = probeLandlock(ctx)
	default:
		r = probeSeatbelt(ctx)
	}
	probes.Add(1)
	logProbe(backend, r, time.Since(start))
	if err := ctx.Err(); err != nil && !r.Usable {
		r.Reason = "probe interrupted: " + err.Error()
	}
	return r
}

// logProbe appends one line per real probe to $CORDON_PROBE_LOG, so a
// benchmark can prove across processes that warm launches probe nothing.
func logProbe(backend string, r Result, d time.Duration) {
	name := os.Getenv(EnvProbeLog)
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return // best effort: a log must never change detection's answer
	}
	defer f.Close()
	fmt.Fprintf(f, "%s probe backend=%s pid=%d usable=%t dur=%s\n",
		time.Now().UTC().Format(time.RFC3339Nano), backend, os.Getpid(), r.Usable, d.Round(time.Microsecond))
}

// reset forgets everything this process knows, as if freshly started.
func reset() {
	mu.Lock()
	defer mu.Unlock()
	results = map[string]Result{}
	probes.Store(0)
	resetBwrapPath()
}
