//go:build linux

// Command nativefloor is the launch benchmark's floor for the native
// backend (bench/launch, variant (en)): the least a Go program does to
// start the native sandbox, and nothing else. It reads a spec the
// benchmark prepared (the mounts 'cordon profile' lists for the same
// workspace, the same filter), starts the init as cordon does (this
// program, linking the native package, is its own init) and exits with
// the status the init reports, as 'cordon run' does, without waiting for
// the kernel to take the namespaces down. No policy, no detection, no
// registry, no stubs: cordon's own work per launch is (an) minus this.
//
//	nativefloor SPEC.json
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/cordon-sandbox/cordon/native"
)

// File is what the benchmark writes: the spec, and its mounts apart
// (native.Spec does not carry them in JSON).
type File struct {
	Spec   native.Spec
	Mounts []native.Mount
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: nativefloor SPEC.json")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		fail(err)
	}
	f.Spec.Mounts = f.Mounts
	f.Spec.StatusFd = 4 // after the spec's descriptor, 3
	cmd, specFile, err := native.Command(context.Background(), &f.Spec, f.Spec.Network, 0)
	if err != nil {
		fail(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		fail(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{specFile, w}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	w.Close()
	var st [1]byte
	if n, _ := r.Read(st[:]); n == 1 {
		os.Exit(int(st[0]))
	}
	cmd.Wait()
	os.Exit(cmd.ProcessState.ExitCode())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "nativefloor:", err)
	os.Exit(125)
}
