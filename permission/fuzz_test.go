package permission

import (
	"testing"
)

// FuzzDecodeDecide: decoding never panics; whatever decodes gets a decision
// with a known action and rule, and a bash command that is denied as
// unparsable is never anything but DENY.
func FuzzDecodeDecide(f *testing.F) {
	for _, s := range []string{
		`{"tool_use_id":"t","name":"bash","arguments":{"command":"ls -la"}}`,
		`{"tool_use_id":"t","name":"bash","arguments":{"command":"sudo rm -rf /"}}`,
		`{"tool_use_id":"t","name":"read_file","arguments":{"path":"../x"}}`,
		`{"tool_use_id":"t","name":"Write","arguments":{"file_path":"a","content":"b"}}`,
		`{"tool_use_id":"t","name":"glob","arguments":{"pattern":"**/*"}}`,
		`{"name":"bash","arguments":"ls"}`, `{"name":"x"}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	fx := newFixture(f)
	known := map[string]bool{}
	for _, id := range Rules() {
		known[id] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRequest(data)
		if err != nil {
			return
		}
		d := fx.d.Decide(r)
		if !known[d.RuleID] || d.Reason == "" {
			t.Fatalf("decision %+v for %s", d, data)
		}
		if d.Action != Allow && d.Action != Ask && d.Action != Deny {
			t.Fatalf("action %q", d.Action)
		}
		if d.Action == Allow && d.RuleID != RuleReadAllow {
			t.Fatalf("allowed by %s: %s", d.RuleID, data)
		}
	})
}
