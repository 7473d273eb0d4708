package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The end-to-end suite (package e2e) runs the real agent CLIs. It is off
// unless EnvE2E is set; scripts/install-agents.sh installs the CLIs into
// the directory EnvAgents names (default: AgentsDir).
const (
	EnvE2E    = "CORDON_E2E"
	EnvAgents = "CORDON_E2E_AGENTS"
)

// AgentsDir is where the agent CLIs were installed: $CORDON_E2E_AGENTS,
// else ~/.cache/cordon-e2e/agents.
func AgentsDir() string {
	if d := os.Getenv(EnvAgents); d != "" {
		return d
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(c, "cordon-e2e", "agents")
}

// RequireE2E skips t unless the end-to-end suite was asked for.
func RequireE2E(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvE2E) == "" {
		t.Skipf("end-to-end suite with the real agent CLIs: off (./test.sh runs it; or set %s=1 after scripts/install-agents.sh)", EnvE2E)
	}
}

// AgentCLI returns the path of agent's CLI program prog as
// scripts/install-agents.sh installed it (AgentsDir()/agent/node_modules/.bin/prog).
// A missing one skips t, saying how to install it, except where a run
// must not hide a part of the suite: with CI set, or CORDON_E2E=require,
// it fails.
func AgentCLI(t testing.TB, agent, prog string) string {
	t.Helper()
	RequireE2E(t)
	p := filepath.Join(AgentsDir(), agent, "node_modules", ".bin", prog)
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("needs the %s CLI (%s), which scripts/install-agents.sh installs from npm: %v", agent, prog, err)
		if os.Getenv(EnvE2E) == "require" || os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}
