package setup

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzInstallRemove: whatever a settings file holds, reading it never
// panics, an install that succeeds leaves a file that parses and holds
// cordon's entry, and removing it gives back the file byte for byte when
// it held no cordon entry before.
func FuzzInstallRemove(f *testing.F) {
	for _, s := range []string{
		"", "{}", "{}\n", claudeSettings, userSettingsSeed,
		`{"hooks": {"PreToolUse": []}}`, `{"a": [1, 2,], /* c */ "b": {"c": null}}`,
		"{\n\t\"hooks\": {\n\t\t\"BeforeTool\": [ // x\n\t\t]\n\t}\n}\n",
		`{"version": 1, "hooks": {"preToolUse": [{"command": "x"}]}}`,
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, src string, which uint8) {
		a := agents[int(which)%len(agents)]
		root, err := parseJSONC([]byte(src))
		if err == nil && json.Valid([]byte(src)) {
			var v any
			json.Unmarshal([]byte(src), &v)
			if _, ok := v.(map[string]any); !ok {
				t.Fatalf("parsed %q as an object", src)
			}
		}
		_ = root
		path := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		before, _ := Commands(a, path)
		c, err := Install(a, path, testHook)
		if err != nil {
			return
		}
		if _, err := parseJSONC(c.New); err != nil {
			t.Fatalf("install made a file that does not parse: %v\n%s", err, c.New)
		}
		if err := os.WriteFile(path, c.New, 0o600); err != nil {
			t.Fatal(err)
		}
		cmds, err := Commands(a, path)
		if err != nil || len(cmds) < len(a.events) {
			t.Fatalf("after install: %v %q\n%s", err, cmds, c.New)
		}
		again, err := Install(a, path, testHook)
		if err != nil || again.Changed() {
			t.Fatalf("second install changed the file: %v\n%s", err, again.Diff())
		}
		r, err := Remove(a, path)
		if err != nil {
			t.Fatal(err)
		}
		if len(before) == 0 && len(bytes.TrimSpace([]byte(src))) > 0 && !r.Remove && !bytes.Equal(r.New, []byte(src)) {
			if root != nil && hasEmptyEvent(a, root) {
				return // an empty list of cordon's event goes with cordon's entry
			}
			if strings.Join(strings.Fields(src), "") == strings.Join(strings.Fields(string(r.New)), "") {
				return // white space inside an empty {} or [] that cordon filled is not kept
			}
			if root != nil && a.version && root.get("version") == nil {
				return // "version": 1, which the agent needs, stays
			}
			t.Fatalf("remove did not give the file back:\n%q\n%q", src, r.New)
		}
	})
}

// hasEmptyEvent: the file had one of a's events as an empty list, which
// remove takes out along with cordon's entry.
func hasEmptyEvent(a *Agent, root *node) bool {
	h := root.get("hooks")
	for _, ev := range a.events {
		if arr := h.get(ev); arr != nil && arr.kind == '[' && len(arr.elems) == 0 {
			return true
		}
	}
	return h != nil && h.kind == '{' && len(h.members) == 0
}

const userSettingsSeed = "{\n  // c\n  \"hooks\": {\"Stop\": []},\n  \"x\": 1 /* t */\n}\n"
