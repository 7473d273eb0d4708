//go:build !linux

// Package reap is Linux only: other systems have no child subreaper.
package reap
