package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// Compose builds the policy 'cordon run --workspace DIR' runs: the
// workspace writable with its auto-run files protected, the rest of the
// host readable and not writable.
func ExampleCompose() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ws, _ := filepath.EvalSymlinks(dir)
	comp, err := workspace.Compose(workspace.Spec{Workspace: ws, Home: "/nonexistent"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []string{"src/main.go", ".git/hooks/pre-commit", ".vscode/tasks.json"} {
		v := comp.Canonical.Explain(filepath.Join(ws, p))
		fmt.Printf("%s write=%v\n", p, v.Write)
	}
	fmt.Println(comp.Canonical.Access("/etc/hosts", policy.Write))
	// Output:
	// src/main.go write=true
	// .git/hooks/pre-commit write=false
	// .vscode/tasks.json write=false
	// false
}

// Preset is the workspace preset alone, as data: the workspace writable,
// writes elsewhere refused, git metadata and files tools run protected,
// and credential stores under HOME denied. Canonicalize turns it into the
// model the backends render and Explain answers from.
func ExamplePreset() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	base, _ := filepath.EvalSymlinks(dir)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)

	p, err := workspace.Preset(ws, workspace.Options{Home: home})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := policy.Canonicalize(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("restrictWrites:", p.RestrictWrites)
	for _, rel := range []string{"ws/main.go", "ws/.git/hooks/pre-commit", "home/.bashrc", "home/.ssh/id_ed25519"} {
		v := c.Explain(filepath.Join(base, rel))
		fmt.Printf("%-25s read=%-5v write=%v\n", rel, v.Read, v.Write)
	}
	// Output:
	// restrictWrites: true
	// ws/main.go                read=true  write=true
	// ws/.git/hooks/pre-commit  read=true  write=false
	// home/.bashrc              read=true  write=false
	// home/.ssh/id_ed25519      read=false write=false
}
