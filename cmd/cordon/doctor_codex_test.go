package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// doctor's Codex trust check against Codex's own verdict (issue 38.7):
// the real CLI's app-server lists cordon's hook as untrusted after
// 'cordon init codex --user', and doctor fails; once the trust Codex
// records when the user chooses "Trust all and continue" is in
// config.toml, Codex lists it trusted and doctor says ok.
func TestDoctorCodexTrustAsCodexSeesIt(t *testing.T) {
	codex := testenv.AgentCLI(t, "codex", "codex") // before setupMachine moves HOME
	home, project, _ := setupMachine(t)
	code, _, errs := runCLI(t, "", "init", "codex", "--user", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	hooks := codexHooks(t, codex, home, project)
	require.Len(t, hooks, 1)
	require.Equal(t, "untrusted", hooks[0].TrustStatus)
	require.Equal(t, filepath.Join(home, ".codex", "hooks.json")+":pre_tool_use:0:0", hooks[0].Key)
	_, by, _ := doctor(t, project)
	require.Equal(t, "fail", by["hook codex"].Status, by["hook codex"])
	require.Contains(t, by["hook codex"].Detail, hooks[0].Key)
	require.Contains(t, by["hook codex"].Fix, fmt.Sprintf("trusted_hash = %q", hooks[0].CurrentHash), "doctor's hash is Codex's")

	cfg := filepath.Join(home, ".codex", "config.toml")
	trust := fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = %q\n", hooks[0].Key, hooks[0].CurrentHash)
	require.NoError(t, os.WriteFile(cfg, []byte(trust), 0o600))
	hooks = codexHooks(t, codex, home, project)
	require.Equal(t, "trusted", hooks[0].TrustStatus)
	_, by, _ = doctor(t, project)
	require.Equal(t, "ok", by["hook codex"].Status, by["hook codex"])
}

type codexHook struct {
	Key         string `json:"key"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// codexHooks asks Codex's app-server (JSON-RPC on stdio) for the hooks it
// would run in project, as hooks/list answers.
func codexHooks(t *testing.T, codex, home, project string) []codexHook {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "app-server")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "CODEX_HOME=" + home + "/.codex"}
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	cwd, _ := json.Marshal(project)
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"cordon-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":[` + string(cwd) + `]}}`,
	} {
		_, err := in.Write([]byte(m + "\n"))
		require.NoError(t, err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var r struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []codexHook `json:"hooks"`
				} `json:"data"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.ID != 2 {
			continue
		}
		require.Len(t, r.Result.Data, 1, sc.Text())
		return r.Result.Data[0].Hooks
	}
	t.Fatalf("codex app-server gave no hooks/list answer: %v", sc.Err())
	return nil
}

// 'cordon init codex --user --trust' (issue 38.7) writes the trust Codex
// itself records: Codex's app-server lists the hook trusted, doctor says
// ok, a second run changes nothing, and the user's other settings stay.
func TestInitCodexTrustAsCodexSeesIt(t *testing.T) {
	codex := testenv.AgentCLI(t, "codex", "codex")
	home, project, _ := setupMachine(t)
	cfg := filepath.Join(home, ".codex", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	mine := "# mine\nmodel = \"gpt-5\"\n[features]\nhooks = true"
	require.NoError(t, os.WriteFile(cfg, []byte(mine), 0o600))
	code, out, errs := runCLI(t, "", "init", "codex", "--user", "--trust", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "Codex trusts cordon's hook")
	hooks := codexHooks(t, codex, home, project)
	require.Len(t, hooks, 1)
	require.Equal(t, "trusted", hooks[0].TrustStatus)
	_, by, _ := doctor(t, project)
	require.Equal(t, "ok", by["hook codex"].Status, by["hook codex"])
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), mine+"\n"), "%s", b)
	code, out, errs = runCLI(t, "", "init", "codex", "--user", "--trust", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "trusts cordon's hook already")
	again, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.Equal(t, string(b), string(again))
}
