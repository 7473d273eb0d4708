// Package strictjson decodes a JSON object into a struct the way cordon's
// inputs are specified (docs/design.md: a policy file has "exactly the five
// keys, camelCase"): a key matches a field's json tag only in its exact
// spelling, a key given twice is an error, and every error says in plain
// words which key is at fault and what it must hold.
//
// encoding/json matches keys case-insensitively and lets the last of two
// equal keys win, so {"DeniedRoots": [...]} was read as deniedRoots and
// {"deniedRoots": ["/a"], "deniedRoots": ["/b"]} silently dropped /a; its
// errors name Go types ("cannot unmarshal string into Go struct field
// File.FsSandboxPolicy.restrictWrites of type bool"). Decode checks the
// keys and the kinds of the values first, walking the JSON object beside
// the struct type, and only then lets encoding/json fill the struct.
//
//	var r Request
//	if err := strictjson.Decode(data, &r, strictjson.Options{}); err != nil {
//		return fmt.Errorf("request: %w", err)
//	}
//
// Fields are found as encoding/json finds them: the json tag's name, or
// the Go name without a tag; embedded structs without a tag are flattened;
// "-" and unexported fields are skipped. Objects nested in fields of struct
// type (or pointer to struct, or slices of those) are checked the same
// way; a json.RawMessage or interface field takes any value unchecked, and
// a map field any object.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Options change what Decode accepts.
type Options struct {
	// IgnoreUnknown skips keys that name no field, as encoding/json does,
	// for inputs whose producer may add fields (Claude Code's hook
	// payload). A key that differs from a field's only in case is still
	// an error: encoding/json would have read it as that field.
	IgnoreUnknown bool
}

// Error is a problem with the input. Key is the dotted path of the key at
// fault ("network.allowDomains"), "" for the input as a whole.
type Error struct {
	Key string
	Msg string
	Err error // the syntax error, if any
}

func (e *Error) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return strconv.Quote(e.Key) + " " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Decode decodes data, one JSON object and nothing after it, into v, a
// non-nil pointer to a struct. A null value of a field leaves it as it was,
// as with encoding/json; null is refused as the whole input and as an item
// of an array. Input that is not valid UTF-8 is refused, naming the offset
// of the first byte at fault.
func Decode(data []byte, v any, o Options) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("strictjson.Decode: want a pointer to a struct, got %T", v))
	}
	if off := invalidUTF8(data); off >= 0 {
		// encoding/json would decode the byte as U+FFFD: a path in the
		// input would name another file than the one written.
		return &Error{Msg: fmt.Sprintf("not valid UTF-8 at byte offset %d (0x%02x): a JSON text is UTF-8, and a byte that is not would be read as another character", off, data[off])}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return syntaxError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Msg: "trailing data after the JSON object"}
	}
	if kindOf(raw) != "an object" {
		return &Error{Msg: "a JSON object is expected, not " + said(raw)}
	}
	w := walker{o: o}
	if err := w.value(raw, rv.Elem().Type(), ""); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		// The walk checked what encoding/json checks but numbers that do
		// not fit their field.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return &Error{Key: te.Field, Msg: "holds a value out of range", Err: err}
		}
		return &Error{Msg: err.Error(), Err: err}
	}
	return nil
}

// invalidUTF8 is the offset of the first byte of data that does not
// begin a valid UTF-8 sequence, -1 when there is none.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// syntaxError says where data stops being JSON, by line and column.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case err == io.EOF:
		return &Error{Msg: "empty input: a JSON object is expected", Err: err}
	case err == io.ErrUnexpectedEOF:
		return &Error{Msg: "the JSON ends before its object is closed", Err: err}
	case errors.As(err, &se):
		before := data[:min(int(se.Offset), len(data))]
		line := bytes.Count(before, []byte("\n")) + 1
		col := len(before) - bytes.LastIndexByte(before, '\n')
		if se.Offset > 0 {
			col-- // Offset is just past the byte at fault
		}
		return &Error{Msg: fmt.Sprintf("not valid JSON at line %d, column %d: %s", line, max(col, 1), se.Error()), Err: err}
	}
	return &Error{Msg: "not valid JSON: " + err.Error(), Err: err}
}

type walker struct{ o Options }

var rawMessage = reflect.TypeFor[json.RawMessage]()

// value checks raw, a syntactically valid JSON value, against t. null is
// accepted here (a field's null leaves it unset); arrays refuse it for
// their items.
func (w *walker) value(raw json.RawMessage, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessage || t.Kind() == reflect.Interface {
		return nil
	}
	k := kindOf(raw)
	if k == "null" {
		return nil
	}
	if k != jsonKind(t) {
		return &Error{Key: path, Msg: "must be " + describe(t) + ", not " + said(raw)}
	}
	switch t.Kind() {
	case reflect.Struct:
		return w.object(raw, t, path)
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return &Error{Key: path, Msg: err.Error(), Err: err}
		}
		et := t.Elem()
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		for i, item := range items {
			if ik := kindOf(item); et != rawMessage && et.Kind() != reflect.Interface && (ik == "null" || ik != jsonKind(et)) {
				return &Error{Key: path, Msg: fmt.Sprintf("must be %s; item %d is %s", describe(t), i+1, said(item))}
			}
			if err := w.value(item, et, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// object checks the keys of raw, an object, against the fields of t, and
// each value against its field's type.
func (w *walker) object(raw json.RawMessage, t reflect.Type, path string) error {
	fields := fieldsOf(t)
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return &Error{Key: path, Msg: err.Error(), Err: err}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &Error{Key: path, Msg: err.Error(), Err: err}
		}
		key := tok.(string) // an object's keys are strings
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return &Error{Key: path, Msg: err.Error(), Err: err}
		}
		full := join(path, key)
		if seen[key] {
			return &Error{Key: full, Msg: "is given twice"}
		}
		seen[key] = true
		f, ok := fields.byName(key)
		if !ok {
			if near, ok := fields.near(key, !w.o.IgnoreUnknown); ok {
				return &Error{Key: full, Msg: fmt.Sprintf("is not a key; did you mean %q?", join(path, near))}
			}
			if w.o.IgnoreUnknown {
				continue
			}
			return &Error{Key: full, Msg: "is not a key; " + fields.list(path)}
		}
		if err := w.value(val, f.typ, full); err != nil {
			return err
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

type field struct {
	name string
	typ  reflect.Type
}

type fieldList []field

// fieldsOf lists t's fields by their JSON names, in declaration order,
// embedded structs without a tag flattened into their place.
func fieldsOf(t reflect.Type) fieldList {
	var out fieldList
	for sf := range t.Fields() {
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, fieldsOf(et)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, field{name, ft})
	}
	return out
}

func (fs fieldList) byName(key string) (field, bool) {
	for _, f := range fs {
		if f.name == key {
			return f, true
		}
	}
	return field{}, false
}

// near is the field key was probably meant to be: the same name in
// another case (what encoding/json would have matched) or, when loose,
// also with '_' and '-' dropped (restrict_writes for restrictWrites).
func (fs fieldList) near(key string, loose bool) (string, bool) {
	squash := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	for _, f := range fs {
		if strings.EqualFold(f.name, key) || loose && squash(f.name) == squash(key) {
			return f.name, true
		}
	}
	return "", false
}

// list names the keys an object may hold.
func (fs fieldList) list(path string) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	of := ""
	if path != "" {
		of = fmt.Sprintf(" of %q", path)
	}
	switch len(names) {
	case 0:
		return "the object" + of + " takes no keys"
	case 1:
		return "the one key" + of + " is " + names[0]
	}
	return "the keys" + of + " are " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// kindOf is the kind of a valid JSON value, as jsonKind names kinds.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// said is the kind of raw as an error message says it: true, false and
// null as themselves.
func said(raw json.RawMessage) string {
	if k := kindOf(raw); k != "a boolean" {
		return k
	}
	return string(bytes.TrimSpace(raw))
}

// jsonKind is kindOf for the values t accepts; "" for any.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return ""
}

// describe says in words what t accepts.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		e := t.Elem()
		for e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		switch jsonKind(e) {
		case "a string":
			return "an array of strings"
		case "a number":
			return "an array of numbers"
		case "a boolean":
			return "an array of true or false values"
		case "an object":
			return "an array of objects"
		case "an array":
			return "an array of arrays"
		}
		return "an array"
	}
	return jsonKind(t)
}
