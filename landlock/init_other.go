//go:build !linux

package landlock

import (
	"context"
	"errors"
	"time"
)

// ABI is 0: Landlock is Linux's.
func ABI() int { return 0 }

var errOS = errors.New("the landlock backend runs only on Linux")

// ABIError says that Landlock is Linux's.
func ABIError(int) error { return errOS }

// Probe reports that Landlock is Linux's.
func Probe(context.Context, time.Duration) (int, error) { return 0, errOS }
