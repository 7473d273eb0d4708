package guards

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzClassifyShell: never panics, never takes long, and whatever does not
// parse is denied.
func FuzzClassifyShell(f *testing.F) {
	for _, s := range []string{
		"sudo apt install x", "rm -rf /", "ls -la", "echo $(sudo id)", "sh -c 'rm -fr x'",
		"{rm,-rf,/}", "$'\\x73udo' id", "cat <<EOF\nx\nEOF", "bash <<< 'sudo id'",
		"find . -exec rm -rf {} +", "env -S 'sudo id'", "echo 'x", "a=$((1+2)) b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		// A hang is a denial of service on every tool call: crash the
		// worker so the fuzzer records the input.
		done := make(chan struct{})
		go func() {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				panic(fmt.Sprintf("ClassifyShell(%q) took more than 5s", src))
			}
		}()
		v := ClassifyShell(src)
		close(done)
		_, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if err != nil && !v.Deny {
			t.Fatalf("%q does not parse (%v) but was not denied", src, err)
		}
		if v.Deny && v.Reason == "" {
			t.Fatalf("%q denied without a reason", src)
		}
	})
}
