package netproxy

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRefusalsBounded: each refused destination is named once, the
// first maxNamedRefusals of them; the rest are counted, and what is
// remembered is bounded with what is printed.
func TestRefusalsBounded(t *testing.T) {
	var out bytes.Buffer
	r := NewRefusals(&out)
	for i := range 1000 {
		e := Event{Host: fmt.Sprintf("h%d.test", i), Port: 443, Rule: "no pattern allows it"}
		r.Event(e)
		r.Event(e) // a repeat says nothing
	}
	r.Event(Event{Host: "ok.test", Port: 443, Allowed: true})
	r.Close()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, maxNamedRefusals+2)
	require.Contains(t, lines[maxNamedRefusals], "more than 100 destinations refused")
	require.Equal(t, "cordon: network: 1800 more refusals not named", lines[len(lines)-1]) // repeats count too: names past the bound are not remembered
	require.Len(t, r.seen, maxNamedRefusals)
}

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(10, 2)
	l.now = func() time.Time { return now }
	n := 0
	for range 100 {
		if l.Allow() {
			n++
		}
	}
	require.Equal(t, 10, n, "the burst")
	require.EqualValues(t, 90, l.Dropped())
	now = now.Add(3 * time.Second)
	n = 0
	for range 100 {
		if l.Allow() {
			n++
		}
	}
	require.Equal(t, 6, n, "2 a second for 3 seconds")
	require.EqualValues(t, 184, l.Dropped())
}
