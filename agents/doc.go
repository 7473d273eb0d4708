// Package agents holds one package per agent hook protocol beside
// claudecode (Codex CLI, Gemini CLI, GitHub Copilot CLI, Cursor) and
// hookcall, what they share. Each reads its agent's payload into a
// hookcall.Call and writes the answer in that agent's format; the
// decisions are package permission's, made with the agent's tool set
// (permission.ToolSet). docs/agents.md gives each protocol and its
// source.
package agents
