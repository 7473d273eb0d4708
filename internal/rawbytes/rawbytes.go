// Package rawbytes converts lists of strings to byte slices and back,
// byte for byte: the native and landlock inits' specs carry argv and
// paths as []byte (base64 in their JSON), so a byte that is not UTF-8
// arrives as given rather than as U+FFFD (docs/design.md).
package rawbytes

// Of is l as byte slices; nil stays nil.
func Of(l []string) [][]byte {
	if l == nil {
		return nil
	}
	out := make([][]byte, len(l))
	for i, a := range l {
		out[i] = []byte(a)
	}
	return out
}

// Strings is l as strings; nil stays nil.
func Strings(l [][]byte) []string {
	if l == nil {
		return nil
	}
	out := make([]string, len(l))
	for i, a := range l {
		out[i] = string(a)
	}
	return out
}
