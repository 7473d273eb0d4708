package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

type inner struct {
	Allow []string `json:"allowDomains,omitempty"`
	Deny  []string `json:"denyDomains,omitempty"`
}

type base struct {
	Roots    []string `json:"deniedRoots"`
	Restrict bool     `json:"restrictWrites"`
	hidden   int
}

// An unexported field is no key ("unexported is no key" below).
var _ = base{}.hidden

type doc struct {
	base
	Network *inner          `json:"network,omitempty"`
	Args    json.RawMessage `json:"arguments"`
	Count   int             `json:"count"`
	Items   []inner         `json:"items"`
	Skip    string          `json:"-"`
	Plain   string
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in string
		o        Options
		want     doc    // when err is ""
		err      string // the whole message
	}{
		{"exact keys", `{"deniedRoots":["/a"],"restrictWrites":true,"network":{"allowDomains":["x.com"]},"arguments":{"ANY":[1,{}]},"Plain":"p"}`, Options{},
			doc{base: base{Roots: []string{"/a"}, Restrict: true}, Network: &inner{Allow: []string{"x.com"}}, Args: json.RawMessage(`{"ANY":[1,{}]}`), Plain: "p"}, ""},
		{"null leaves a field unset", `{"deniedRoots":null,"network":null,"restrictWrites":null}`, Options{}, doc{Args: nil}, ""},
		{"wrong case", `{"DeniedRoots":["/x"]}`, Options{}, doc{}, `"DeniedRoots" is not a key; did you mean "deniedRoots"?`},
		{"wrong case then right", `{"deniedroots":["/y"],"deniedRoots":["/z"]}`, Options{}, doc{}, `"deniedroots" is not a key; did you mean "deniedRoots"?`},
		{"snake case", `{"restrict_writes":true}`, Options{}, doc{}, `"restrict_writes" is not a key; did you mean "restrictWrites"?`},
		{"twice", `{"deniedRoots":["/a"],"deniedRoots":["/b"]}`, Options{}, doc{}, `"deniedRoots" is given twice`},
		{"twice nested", `{"network":{"denyDomains":[],"denyDomains":["a"]}}`, Options{}, doc{}, `"network.denyDomains" is given twice`},
		{"twice in an array's object", `{"items":[{},{"allowDomains":[],"allowDomains":[]}]}`, Options{}, doc{}, `"items[1].allowDomains" is given twice`},
		{"wrong case nested", `{"network":{"AllowDomains":["x.com"]}}`, Options{}, doc{}, `"network.AllowDomains" is not a key; did you mean "network.allowDomains"?`},
		{"unknown", `{"denyRoots":[]}`, Options{}, doc{}, `"denyRoots" is not a key; the keys are deniedRoots, restrictWrites, network, arguments, count, items and Plain`},
		{"unknown nested", `{"network":{"allow":["x"]}}`, Options{}, doc{}, `"network.allow" is not a key; the keys of "network" are allowDomains and denyDomains`},
		{"unexported is no key", `{"hidden":1}`, Options{}, doc{}, `"hidden" is not a key; the keys are deniedRoots, restrictWrites, network, arguments, count, items and Plain`},
		{"bool as string", `{"restrictWrites":"yes"}`, Options{}, doc{}, `"restrictWrites" must be true or false, not a string`},
		{"list as string", `{"deniedRoots":"/x"}`, Options{}, doc{}, `"deniedRoots" must be an array of strings, not a string`},
		{"item not a string", `{"deniedRoots":["/x",7]}`, Options{}, doc{}, `"deniedRoots" must be an array of strings; item 2 is a number`},
		{"null item", `{"deniedRoots":[null]}`, Options{}, doc{}, `"deniedRoots" must be an array of strings; item 1 is null`},
		{"object as bool", `{"network":true}`, Options{}, doc{}, `"network" must be an object, not true`},
		{"nested list as object", `{"network":{"allowDomains":{}}}`, Options{}, doc{}, `"network.allowDomains" must be an array of strings, not an object`},
		{"number as string", `{"count":"1"}`, Options{}, doc{}, `"count" must be a number, not a string`},
		{"number out of range", `{"count":1e300}`, Options{}, doc{}, `"count" holds a value out of range`},
		{"array", `[]`, Options{}, doc{}, `a JSON object is expected, not an array`},
		{"null", ` null `, Options{}, doc{}, `a JSON object is expected, not null`},
		{"empty", ``, Options{}, doc{}, `empty input: a JSON object is expected`},
		{"cut short", `{"deniedRoots":[`, Options{}, doc{}, `the JSON ends before its object is closed`},
		{"syntax", "{\n  \"deniedRoots\": [\"/a\",]\n}", Options{}, doc{}, `not valid JSON at line 2, column 24: invalid character ']' looking for beginning of value`},
		{"trailing", `{} {}`, Options{}, doc{}, `trailing data after the JSON object`},
		{"ignored unknown", `{"restrictWrites":true,"extra":{"x":1},"Other":2}`, Options{IgnoreUnknown: true}, doc{base: base{Restrict: true}}, ""},
		{"ignored unknown, case still refused", `{"RestrictWrites":true}`, Options{IgnoreUnknown: true}, doc{}, `"RestrictWrites" is not a key; did you mean "restrictWrites"?`},
		{"ignored unknown, snake case ignored", `{"restrict_writes":true}`, Options{IgnoreUnknown: true}, doc{}, ""},
		{"ignored unknown, twice refused", `{"extra":1,"extra":2}`, Options{IgnoreUnknown: true}, doc{}, `"extra" is given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got doc
			err := Decode([]byte(tt.in), &got, tt.o)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				var e *Error
				require.True(t, errors.As(err, &e))
				return
			}
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(tt.want, got, cmp.AllowUnexported(doc{}, base{})))
		})
	}
}

// FuzzDecode: what Decode accepts, encoding/json decodes to the same
// value, and Decode never panics.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"deniedRoots":["/a"],"restrictWrites":true,"network":{"allowDomains":["x.com"]}}`,
		`{"DeniedRoots":[]}`, `{"deniedRoots":["/a"],"deniedRoots":["/b"]}`, `[]`, `{`, `{"items":[{"denyDomains":null}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want doc
		if Decode(data, &got, Options{}) != nil {
			return
		}
		require.NoError(t, json.Unmarshal(data, &want))
		require.Empty(t, cmp.Diff(want, got, cmp.AllowUnexported(doc{}, base{})))
	})
}

// TestInvalidUTF8: a byte that is not UTF-8, anywhere, is refused with its
// offset, never decoded as U+FFFD; valid multi-byte characters pass.
func TestInvalidUTF8(t *testing.T) {
	var v struct {
		A string `json:"a"`
	}
	require.NoError(t, Decode([]byte(`{"a":"é€😀"}`), &v, Options{}))
	require.Equal(t, "é€😀", v.A)
	for _, tt := range []struct {
		in  string
		off int
	}{{"{\"a\":\"x\xffy\"}", 7}, {"{\"a\":\"\xc3\"}", 6}, {"{\"a\":\"\xed\xa0\x80\"}", 6}, {"{\"a\":\"ok\"}\xfe", 10}, {"{\"\xc0\xaf\":1}", 2}} {
		err := Decode([]byte(tt.in), &v, Options{IgnoreUnknown: true})
		require.ErrorContains(t, err, fmt.Sprintf("not valid UTF-8 at byte offset %d ", tt.off), "%q", tt.in)
	}
}
