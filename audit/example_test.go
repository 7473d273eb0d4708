package audit_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/audit"
)

// A log is opened with a key (OpenUser takes the user's own, made on first
// use), appended to record by record, and verified with the same key. An
// edit anywhere breaks the MAC of the record it touches, and Verify names
// that record.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	base, _ := filepath.EvalSymlinks(dir) // logs are opened by their real path only
	path := filepath.Join(base, "session.jsonl")
	defer audit.Forget(path) // cordon's own copy of the anchor, in its state directory

	key, err := audit.NewKey()
	if err != nil {
		fmt.Println(err)
		return
	}
	log, err := audit.Open(path, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	log.Append(audit.KindRequest, "toolu_1", map[string]any{"name": "Bash", "command": "make test"})
	log.Append(audit.KindResult, "toolu_1", map[string]any{"exit_code": 0})

	recs, err := audit.Verify(path, key)
	fmt.Println("verified:", err == nil)
	for _, r := range recs {
		fmt.Println(r.Seq, r.Kind, r.ToolUseID, string(r.Data))
	}

	// Someone who can write the log, but has not the key, rewrites history.
	b, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(b, []byte("make test"), []byte("sudo true"), 1), 0o600)
	_, err = audit.Verify(path, key)
	var bad *audit.VerifyError
	if errors.As(err, &bad) {
		fmt.Println("tampered: record", bad.Record)
	}
	// Output:
	// verified: true
	// 1 request toolu_1 {"command":"make test","name":"Bash"}
	// 2 result toolu_1 {"exit_code":0}
	// tampered: record 1
}
