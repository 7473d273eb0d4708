package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/netproxy"
)

// TestNetEventsBounded: a sandbox deciding how many network decisions
// there are does not decide how big the audit log and stderr grow: past
// the burst, records are dropped and counted in one last record, and
// stderr names at most 100 destinations.
func TestNetEventsBounded(t *testing.T) {
	k, err := audit.NewKey()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(path, k)
	require.NoError(t, err)
	var stderr bytes.Buffer
	// A burst of 20 and nothing after: the refill is the Limiter's own
	// test.
	handle, done := netEvents(&env{stderr: &stderr}, log, netproxy.NewLimiter(20, 0))
	n := 500
	for i := range n {
		handle(netproxy.Event{Proto: "connect", Host: fmt.Sprintf("h%d.test", i), Port: 443, Rule: "no pattern allows it"})
	}
	done()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var records []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		records = append(records, r)
	}
	require.Len(t, records, 21, "the burst and the count")
	last, _ := json.Marshal(records[len(records)-1]["record"])
	require.Contains(t, string(last), `"dropped":480`)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	require.LessOrEqual(t, len(lines), 102)
	require.Contains(t, lines[len(lines)-1], "more refusals not named")
}
