//go:build !linux

package conformance

import (
	"errors"
	"os"
)

var errNoHandles = errors.New("O_PATH handles and pidfds are Linux's")

func openPath(string) (*os.File, error) { return nil, errNoHandles }
func openPidfd(int) (*os.File, error)   { return nil, errNoHandles }
func ttyRdev(*os.File) string           { return "" }
func drainMaster(*os.File) string       { return "" }
