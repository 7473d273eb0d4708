//go:build !linux

// Command mounts measures Linux's mount API; it does nothing elsewhere.
package main

func main() {}
