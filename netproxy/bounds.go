package netproxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/cordon-sandbox/cordon/internal/shown"
)

// What a client (the sandbox) or a destination (a server the sandbox
// chose among the allowed ones) can make the proxy hold. The proxy runs
// in cordon, outside the sandbox, for as long as the sandbox runs: every
// read it makes is bounded, and so is the sum of what it holds.
const (
	// maxLine bounds one line read outside a head: a chunk-size line
	// with its extensions, or a trailer line. Real ones are a few bytes;
	// net/http allows 4 KiB for a chunk line.
	maxLine = 64 << 10
	// maxHead bounds a request's or a response's whole head (its first
	// line and header lines), and a chunked body's trailers, as
	// net/http's default MaxHeaderBytes does.
	maxHead = 1 << 20
	// maxHeadsHeld bounds the heads held at once across every connection
	// of a proxy: MaxConns heads of maxHead each would be 256 MiB. A head
	// past it is refused (503) rather than read.
	maxHeadsHeld = 8 << 20
	// lineCost is what each line of a head is charged beyond its bytes,
	// against maxHead and maxHeadsHeld: a header parsed into a
	// textproto.MIMEHeader holds a map entry, its canonical key and a
	// value slice, and the map's growth leaves garbage behind. Twelve
	// heads of 132,651 lines "abc:\n" (8 MB raw) held 43 MB live and a
	// cordon run 230 MB resident. Charged 200 bytes a line, as net/http
	// charges a header, a head holds at most about 5,000 lines (real
	// ones have tens; a 16 KiB cookie is one line), and the parsed heads
	// held at once cost no more than their budget says.
	lineCost = 200
	// defaultMaxConns is MaxConns when unset: connections served at once.
	// Each holds two goroutines and their copy buffers (about 80 KiB);
	// clients past it wait in the listener's backlog, in the kernel.
	defaultMaxConns = 256
	// maxNameShown bounds a host name in an event, a refusal message and
	// so an audit record: a DNS name is at most 253 bytes, and anything
	// longer is no destination, only a way to fill the user's terminal
	// and audit log.
	maxNameShown = 256
	// maxReasonShown bounds an event's reason (a lookup or connect error
	// quoting the name).
	maxReasonShown = 512
	// closeGrace bounds how long Close waits for the connections' last
	// events once it has closed every connection and cancelled every
	// lookup and dial: what still runs is stuck on a writer of events.
	closeGrace = time.Second
)

var (
	errHeadTooLarge = errors.New("head larger than 1 MiB (each line counted 200 bytes more)")
	errLineTooLong  = errors.New("line longer than 64 KiB")
	errBusy         = errors.New("the proxy holds 8 MiB of heads already")
)

// capReader reads from r at most left more bytes, when left >= 0, and
// charges what it reads to the proxy's shared budget of held heads
// until release.
type capReader struct {
	r      io.Reader
	left   int64
	held   int64
	budget *atomic.Int64
	busy   bool // the budget was passed: the head's next read fails
}

// limit starts a head: at most n bytes, charged to the budget.
func (c *capReader) limit(n int64) { c.left, c.busy = n, false }

// release ends a head: its bytes are no longer held.
func (c *capReader) release() {
	c.left = -1
	if c.budget != nil && c.held != 0 {
		c.budget.Add(-c.held)
	}
	c.held = 0
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left >= 0 && c.busy {
		return 0, errBusy
	}
	if c.left == 0 {
		return 0, errHeadTooLarge
	}
	if c.left > 0 {
		if int64(len(p)) > c.left {
			p = p[:c.left]
		}
		if c.budget != nil && c.budget.Load()+int64(len(p)) > maxHeadsHeld {
			return 0, errBusy
		}
	}
	n, err := c.r.Read(p)
	if c.left > 0 {
		// Bytes of a body read along with the head are charged as the
		// head's, its newlines too: at most a buffer's worth.
		cost := int64(n) + lineCost*int64(bytes.Count(p[:n], newline))
		c.left = max(c.left-cost, 0)
		c.held += cost
		if c.budget != nil && c.budget.Add(cost) > maxHeadsHeld && err == nil {
			// What was read stays charged until release; the parse
			// goes on with what bufio holds and stops at the next read.
			c.busy = true
		}
	}
	return n, err
}

var newline = []byte{'\n'}

// readLine reads one line, its newline included, of at most max bytes.
func readLine(r *bufio.Reader, max int) (string, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return "", errLineTooLong
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return "", err
		}
		return string(line), nil
	}
}

// Shown is s as an event, a message or an audit record may carry it:
// escaped as shown.Token (nothing reaches a terminal raw, nothing shows
// nothing, and a name cannot hold spaces that would carry words of its
// own, such as fake advice, into the refusal line), and at most max
// bytes of s kept, the rest replaced by a note of the original length.
func Shown(s string, max int) string { return shown.Cut(s, max) }
