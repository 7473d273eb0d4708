package policy_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/policy"
)

// Compose builds the policy 'cordon run --workspace DIR' runs: the
// workspace writable with its auto-run files protected, the rest of the
// host readable and not writable.
func ExampleCompose() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ws, _ := filepath.EvalSymlinks(dir)
	comp, err := policy.Compose(policy.Spec{Workspace: ws, Home: "/nonexistent"})
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
