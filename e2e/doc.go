// Package e2e drives the real agent CLIs (Claude Code, Codex, Gemini CLI,
// GitHub Copilot CLI)
// against a scripted model server on 127.0.0.1, with cordon as their hook
// and around them (cordon run --agent), and judges each scenario by the
// host's files and by what the CLI sent back to the model. It runs only
// when CORDON_E2E is set (./test.sh sets it), with the CLIs installed by
// scripts/install-agents.sh.
//
// Each test is one CLI session carrying every scenario (see session), and
// the tests run in parallel, as many at a time as go test's -parallel
// (GOMAXPROCS by default): a session is a chain of processes (the CLI,
// its hook, the sandboxed shell) of which one runs at a time, so two
// sessions at a time keep both cores of a small CI machine busy.
package e2e
