package netproxy

import (
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// maxNamedRefusals bounds the distinct destinations named on the
// user's terminal: the sandbox chooses how many names it asks for.
const maxNamedRefusals = 100

// Refusals names each refused host:port once on a writer (the user's
// terminal), the first maxNamedRefusals of them; past that it counts,
// and Close says how many more there were. What it remembers is
// bounded with what it prints.
type Refusals struct {
	mu   sync.Mutex
	w    io.Writer
	seen map[string]bool
	more int
}

// NewRefusals prints refusals on w.
func NewRefusals(w io.Writer) *Refusals {
	return &Refusals{w: w, seen: map[string]bool{}}
}

// Event takes one of the proxy's events.
func (r *Refusals) Event(e Event) {
	msg := Refusal(e)
	if msg == "" || r.w == nil {
		return
	}
	key := e.Host + ":" + strconv.Itoa(e.Port)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.seen[key]:
	case len(r.seen) < maxNamedRefusals:
		r.seen[key] = true
		fmt.Fprintln(r.w, msg)
	default:
		if r.more == 0 {
			fmt.Fprintf(r.w, "cordon: network: more than %d destinations refused; the others are counted, not named\n", maxNamedRefusals)
		}
		r.more++
	}
}

// Close says how many refusals went unnamed, if any. It does not wait
// for an Event stuck writing (a terminal held): it then says nothing.
func (r *Refusals) Close() {
	if !r.mu.TryLock() {
		return
	}
	defer r.mu.Unlock()
	if r.more > 0 && r.w != nil {
		fmt.Fprintf(r.w, "cordon: network: %d more refusals not named\n", r.more)
		r.more = 0
	}
}

// Limiter lets events through at a bounded rate: a burst at once, then
// a steady rate, and counts the rest. The audit log takes every
// decision of the proxy, and a sandbox decides how many there are.
type Limiter struct {
	mu      sync.Mutex
	burst   float64
	rate    float64 // per second
	tokens  float64
	last    time.Time
	dropped int64
	now     func() time.Time
}

// Audit limits: a build that opens a thousand connections is recorded
// whole; a sandbox that opens a million leaves 64 records a second past
// that, about 40 KiB a second at most (a record is at most some 700
// bytes with its name and reason cut).
const (
	AuditBurst = 1000
	AuditRate  = 64
)

// NewLimiter lets burst events through at once and rate a second after.
func NewLimiter(burst int, rate float64) *Limiter {
	return &Limiter{burst: float64(burst), rate: rate, tokens: float64(burst), now: time.Now}
}

// Allow reports whether one more event may go through; if not, it is
// counted as dropped.
func (l *Limiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		return true
	}
	l.dropped++
	return false
}

// Dropped is how many events Allow refused.
func (l *Limiter) Dropped() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}
