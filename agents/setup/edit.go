package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/atomicfile"
)

// Change is what installing or removing cordon's hook does to one file.
type Change struct {
	Agent *Agent
	// Path is the settings file as named; Target is the file written
	// (Path with symlinks resolved, so that a linked dotfile stays linked).
	Path, Target string
	Old, New     []byte
	Existed      bool // the file was there
	Remove       bool // the file is to be removed (cordon's own file, emptied)
	Mode         fs.FileMode
	// Mixed are cordon hook commands found in entries that also hold
	// other hooks: left as they are, for the user to sort out.
	Mixed []string
}

// Changed reports whether applying c would change anything.
func (c *Change) Changed() bool {
	return c.Remove || !bytes.Equal(c.Old, c.New) || (!c.Existed && len(c.New) > 0)
}

// Apply writes the change: the new content replaces the file whole
// (a temporary file renamed over it, with the old file's mode), so a
// reader sees the old settings or the new, never part of either. The
// file's directory is made if missing (0700 under HOME, 0755 in a
// project).
func (c *Change) Apply(private bool) error {
	if !c.Changed() {
		return nil
	}
	if c.Remove {
		if err := os.Remove(c.Target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", c.Path, err)
		}
		return nil
	}
	dir := filepath.Dir(c.Target)
	perm := fs.FileMode(0o755)
	if private {
		perm = 0o700
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("write %s: %w", c.Path, err)
	}
	if err := atomicfile.WriteFileMode(c.Target, c.New, c.Mode); err != nil {
		return fmt.Errorf("write %s: %w", c.Path, err)
	}
	return nil
}

// ParseError is a settings file cordon cannot read; nothing is written.
type ParseError struct {
	Path string
	Err  error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: cannot parse it (%v); fix or move it, cordon leaves it untouched", e.Path, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// read loads path for a change: a missing file is empty.
func read(a *Agent, path string) (*Change, error) {
	c := &Change{Agent: a, Path: path, Target: path, Mode: 0o644}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		c.Target = real
	}
	fi, err := os.Stat(c.Target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("read %s: not a regular file", path)
	}
	c.Existed, c.Mode = true, fi.Mode().Perm()
	if c.Old, err = os.ReadFile(c.Target); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return c, nil
}

// parse parses src, "{}" when it holds nothing but white space.
func parse(path string, src []byte) ([]byte, *node, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	root, err := parseJSONC(src)
	if err != nil {
		return nil, nil, &ParseError{Path: path, Err: err}
	}
	return src, root, nil
}

// Install plans writing h's entry for agent a into path: each event the
// agent has gets exactly one cordon entry, the one h describes. Entries
// of cordon's that differ (another binary, other flags) are replaced;
// every other byte of the file stays as it was.
func Install(a *Agent, path string, h Hook) (*Change, error) {
	c, err := read(a, path)
	if err != nil {
		return nil, err
	}
	src, root, err := parse(path, c.Old)
	if err != nil {
		return nil, err
	}
	want := a.entry(h.Command(a.Name))
	for _, ev := range a.events {
		hooks := root.get("hooks")
		if hooks == nil {
			if a.version && root.get("version") == nil {
				src = insertMember(src, root, "version", 1)
				if root, err = reparse(path, src); err != nil {
					return nil, err
				}
			}
			src = insertMember(src, root, "hooks", map[string]any{ev: []any{want}})
		} else if hooks.kind != '{' {
			return nil, &ParseError{Path: path, Err: errors.New(`"hooks" is not an object`)}
		} else if arr := hooks.get(ev); arr == nil {
			src = insertMember(src, hooks, ev, []any{want})
		} else if arr.kind != '[' {
			return nil, &ParseError{Path: path, Err: fmt.Errorf(`"hooks.%s" is not an array`, ev)}
		} else {
			mine, mixed := a.cordonEntries(arr)
			c.Mixed = append(c.Mixed, mixed...)
			if len(mine) == 1 && sameJSON(src[arr.elems[mine[0]].start:arr.elems[mine[0]].end], want) {
				continue
			}
			for i := len(mine) - 1; i >= 0; i-- {
				src = removeAt(src, arr, mine[i])
				if root, err = reparse(path, src); err != nil {
					return nil, err
				}
				arr = root.get("hooks").get(ev)
			}
			src = appendElem(src, arr, want)
		}
		if root, err = reparse(path, src); err != nil {
			return nil, err
		}
	}
	c.New = src
	return c, nil
}

// Remove plans taking cordon's entries out of path: entries all of whose
// hooks run 'cordon hook'. An event left with no entry is removed, and
// "hooks" when left empty; cordon's own file is removed when nothing
// else is left in it.
func Remove(a *Agent, path string) (*Change, error) {
	c, err := read(a, path)
	if err != nil {
		return nil, err
	}
	if !c.Existed {
		return c, nil
	}
	src, root, err := parse(path, c.Old)
	if err != nil {
		return nil, err
	}
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		c.New = c.Old
		return c, nil
	}
	removed := false
	for _, m := range hooks.members {
		arr := root.get("hooks").get(m.key)
		if arr == nil || arr.kind != '[' {
			continue
		}
		mine, mixed := a.cordonEntries(arr)
		c.Mixed = append(c.Mixed, mixed...)
		if len(mine) == 0 {
			continue
		}
		removed = true
		if len(mine) == len(arr.elems) {
			h := root.get("hooks")
			src = removeAt(src, h, memberIndex(h, m.key))
		} else {
			for i := len(mine) - 1; i >= 0; i-- {
				src = removeAt(src, arr, mine[i])
				if root, err = reparse(path, src); err != nil {
					return nil, err
				}
				arr = root.get("hooks").get(m.key)
			}
		}
		if root, err = reparse(path, src); err != nil {
			return nil, err
		}
	}
	if h := root.get("hooks"); removed && len(h.members) == 0 {
		src = removeAt(src, root, memberIndex(root, "hooks"))
		if root, err = reparse(path, src); err != nil {
			return nil, err
		}
		if a.ownFile && (len(root.members) == 0 || (len(root.members) == 1 && root.get("version") != nil)) {
			c.Remove = true
		}
	}
	c.New = src
	if !removed {
		c.New = c.Old
	}
	return c, nil
}

// Commands lists the 'cordon hook' command lines in the agent's file at
// path, for doctor: none when the file is missing.
func Commands(a *Agent, path string) ([]string, error) {
	c, err := read(a, path)
	if err != nil || !c.Existed {
		return nil, err
	}
	_, root, err := parse(path, c.Old)
	if err != nil {
		return nil, err
	}
	var out []string
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return nil, nil
	}
	for _, m := range hooks.members {
		if m.val.kind != '[' {
			continue
		}
		for _, e := range m.val.elems {
			for _, cmd := range a.commandsOf(e) {
				if _, _, ok := CordonHook(cmd); ok {
					out = append(out, cmd)
				}
			}
		}
	}
	return out, nil
}

// Gates lists the 'cordon hook' command lines in the agent's file at path
// that gate the agent's tools: in an entry of the pre-tool event, whose
// matcher covers the tools 'cordon init' names (or is absent: every
// tool), of type "command", exactly the line 'cordon init' writes. why
// says what is wrong with the first one that does not, when none does.
func Gates(a *Agent, path string) (gates []string, why string, err error) {
	c, err := read(a, path)
	if err != nil || !c.Existed {
		return nil, "", err
	}
	_, root, err := parse(path, c.Old)
	if err != nil {
		return nil, "", err
	}
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return nil, "", nil
	}
	note := func(s string) {
		if why == "" {
			why = s
		}
	}
	for _, m := range hooks.members {
		if m.val.kind != '[' {
			continue
		}
		for _, e := range m.val.elems {
			for _, h := range a.hookObjects(e) {
				cmd := h.get(a.commandKey).text()
				if _, _, ok := CordonHook(cmd); !ok {
					continue
				}
				switch mt := e.get("matcher"); {
				case m.key != a.events[0]:
					note(fmt.Sprintf("%q runs under %q, not %q: it gates no tool", cmd, m.key, a.events[0]))
				case mt != nil && (mt.kind != '"' || mt.str != "" && mt.str != a.matcher):
					note(fmt.Sprintf("%q has matcher %q, not %q: tools outside it go ungated", cmd, mt.text(), a.matcher))
				case (a.shape == groups || a.commandKey == "bash") && h.get("type").text() != "command":
					note(fmt.Sprintf("%q is not of \"type\": \"command\"", cmd))
				default:
					if _, ok := Exact(cmd, a.Name); !ok {
						note(fmt.Sprintf("%q is not the command line 'cordon init' writes (an absolute cordon, 'hook %s', its flags, nothing more)", cmd, a.Name))
						continue
					}
					gates = append(gates, cmd)
				}
			}
		}
	}
	return gates, why, nil
}

// hookObjects are the objects of one entry that hold a command: the
// entry itself (flat), or its "hooks" (groups).
func (a *Agent) hookObjects(e *node) []*node {
	if e.kind != '{' {
		return nil
	}
	if a.shape == flat {
		return []*node{e}
	}
	hs := e.get("hooks")
	if hs == nil || hs.kind != '[' {
		return nil
	}
	return hs.elems
}

func reparse(path string, src []byte) (*node, error) {
	root, err := parseJSONC(src)
	if err != nil {
		// An edit of a file that parsed must parse: this is cordon's bug.
		return nil, fmt.Errorf("edit of %s went wrong (%v); nothing written", path, err)
	}
	return root, nil
}

func memberIndex(obj *node, key string) int {
	for i, m := range obj.members {
		if m.key == key {
			return i
		}
	}
	return -1
}

// entry is cordon's entry for one event, running command.
func (a *Agent) entry(command string) any {
	if a.shape == flat {
		e := orderedMap{}
		if a.commandKey == "bash" {
			e = append(e, kv{"type", "command"})
		}
		e = append(e, kv{a.commandKey, command})
		if a.matcher != "" {
			e = append(e, kv{"matcher", a.matcher})
		}
		return e
	}
	hook := orderedMap{}
	if a.name != "" {
		hook = append(hook, kv{"name", a.name})
	}
	hook = append(hook, kv{"type", "command"}, kv{"command", command})
	g := orderedMap{}
	if a.matcher != "" {
		g = append(g, kv{"matcher", a.matcher})
	}
	return append(g, kv{"hooks", []any{hook}})
}

// commandsOf are the command lines of one entry of an event's list.
func (a *Agent) commandsOf(e *node) []string {
	if e.kind != '{' {
		return nil
	}
	if a.shape == flat {
		if s := e.get(a.commandKey).text(); s != "" {
			return []string{s}
		}
		return nil
	}
	hs := e.get("hooks")
	if hs == nil || hs.kind != '[' {
		return nil
	}
	var out []string
	for _, h := range hs.elems {
		out = append(out, h.get(a.commandKey).text())
	}
	return out
}

// cordonEntries are the indexes of arr's entries that are cordon's (every
// command in them runs 'cordon hook'), and the cordon commands found in
// entries mixed with other hooks.
func (a *Agent) cordonEntries(arr *node) (mine []int, mixed []string) {
	for i, e := range arr.elems {
		cmds := a.commandsOf(e)
		n := 0
		for _, c := range cmds {
			if _, _, ok := CordonHook(c); ok {
				n++
			}
		}
		switch {
		case n > 0 && n == len(cmds):
			mine = append(mine, i)
		case n > 0:
			for _, c := range cmds {
				if _, _, ok := CordonHook(c); ok {
					mixed = append(mixed, c)
				}
			}
		}
	}
	return mine, mixed
}

// sameJSON reports whether raw (JSON, perhaps with comments) holds the
// same value as v.
func sameJSON(raw []byte, v any) bool {
	var got, want any
	if json.Unmarshal(raw, &got) != nil {
		return false
	}
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &want) != nil {
		return false
	}
	return reflect.DeepEqual(got, want)
}

// kv and orderedMap marshal an object with its keys in the order given,
// as people write these files.
type kv struct {
	k string
	v any
}

type orderedMap []kv

func (m orderedMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(e.k)
		if err != nil {
			return nil, err
		}
		v, err := marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping: a command line with
// '<' or '&' stays readable in the file.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// indented renders v as JSON indented by unit, its lines after the first
// starting with prefix.
func indented(v any, prefix, unit string) []byte {
	raw, err := marshal(v)
	if err != nil {
		panic(err) // cordon's own values always marshal
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, prefix, unit); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// indentUnit guesses the file's indentation step from its first indented
// line; two spaces when it has none.
func indentUnit(src []byte) string {
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimLeft(line, " \t")
		if ind := line[:len(line)-len(t)]; ind != "" && t != "" {
			return ind
		}
	}
	return "  "
}

// lineIndent is the white space that starts the line holding offset.
func lineIndent(src []byte, off int) string {
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// splice replaces src[from:to] with s.
func splice(src []byte, from, to int, s string) []byte {
	out := make([]byte, 0, len(src)+len(s))
	out = append(out, src[:from]...)
	out = append(out, s...)
	return append(out, src[to:]...)
}

// insertMember adds "key": v as the object's last member. With members
// before it, the text goes right after the last one's value, so that
// removing it (removeAt) gives back the file byte for byte.
func insertMember(src []byte, obj *node, key string, v any) []byte {
	unit := indentUnit(src)
	outer := lineIndent(src, obj.start)
	inner := outer + unit
	k, _ := marshal(key)
	text := string(k) + ": " + string(indented(v, inner, unit))
	if n := len(obj.members); n > 0 {
		last := obj.members[n-1].val.end
		return splice(src, last, last, ",\n"+inner+text)
	}
	return insertFirst(src, obj, inner, outer, text)
}

// appendElem adds v as the array's last element, as insertMember does.
func appendElem(src []byte, arr *node, v any) []byte {
	unit := indentUnit(src)
	outer := lineIndent(src, arr.start)
	inner := outer + unit
	text := string(indented(v, inner, unit))
	if n := len(arr.elems); n > 0 {
		last := arr.elems[n-1].end
		return splice(src, last, last, ",\n"+inner+text)
	}
	return insertFirst(src, arr, inner, outer, text)
}

// insertFirst puts text into an empty object or array: on a line of its
// own, after any comment inside.
func insertFirst(src []byte, n *node, inner, outer, text string) []byte {
	body := src[n.start+1 : n.end-1]
	if len(bytes.TrimSpace(body)) == 0 {
		return splice(src, n.start+1, n.end-1, "\n"+inner+text+"\n"+outer)
	}
	return splice(src, n.end-1, n.end-1, "\n"+inner+text+"\n"+outer)
}

// removeAt takes out member or element i of obj (an object or array): the
// text from the end of the one before to its own end, or, for the first,
// from its start to the start of the next; the only one leaves the
// brackets empty.
func removeAt(src []byte, n *node, i int) []byte {
	starts, ends := spans(n)
	switch {
	case i > 0:
		return splice(src, ends[i-1], ends[i], "")
	case len(starts) > 1:
		return splice(src, starts[0], starts[1], "")
	default:
		return splice(src, n.start+1, n.end-1, "")
	}
}

func spans(n *node) (starts, ends []int) {
	if n.kind == '{' {
		for _, m := range n.members {
			starts, ends = append(starts, m.keyStart), append(ends, m.val.end)
		}
		return starts, ends
	}
	for _, e := range n.elems {
		starts, ends = append(starts, e.start), append(ends, e.end)
	}
	return starts, ends
}
