//go:build !linux

package gate

import (
	"context"
	"errors"
)

var errUnsupported = errors.New("gate: seccomp user notification is Linux only")

// Install is Linux only.
func Install(prog []byte) (int, error) { return -1, errUnsupported }

// SendFd is Linux only.
func SendFd(sock int, fds ...int) error { return errUnsupported }

// RecvFd is Linux only.
func RecvFd(sock int) (int, error) { return -1, errUnsupported }

// RecvFds is Linux only.
func RecvFds(sock, most int) ([]int, error) { return nil, errUnsupported }

// Self is Linux only.
func Self() (Identity, error) { return Identity{}, errUnsupported }

// Serve is Linux only.
func Serve(ctx context.Context, listener int, d Decider, id Identity) error {
	return errUnsupported
}
