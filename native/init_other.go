//go:build !linux

package native
