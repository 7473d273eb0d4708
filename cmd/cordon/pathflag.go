package main

import (
	"errors"
	"flag"
)

// errEmptyPath is what a path flag says of an empty value: an unset
// variable ("--workspace $PROJECT_DIR") must not turn into no flag at all,
// and so into a launch with less policy than asked.
var errEmptyPath = errors.New("the path is empty (an unset variable?): name a path")

// pathVar defines a flag that names a path, refusing an empty value.
func pathVar(fs *flag.FlagSet, dst *string, name, value, usage string) {
	*dst = value
	fs.Func(name, usage, func(s string) error {
		if s == "" {
			return errEmptyPath
		}
		*dst = s
		return nil
	})
}

// appendPath is a repeatable path flag's setter: each value is added to
// dst, an empty one refused.
func appendPath(dst *[]string) func(string) error {
	return func(s string) error {
		if s == "" {
			return errEmptyPath
		}
		*dst = append(*dst, s)
		return nil
	}
}
