// Package agents holds one package per agent hook protocol beside
// claudecode (Codex CLI, Gemini CLI, GitHub Copilot CLI, Cursor) and
// hookcall, what they share. Each reads its agent's payload into a
// hookcall.Call and writes the answer in that agent's format; the
// decisions are package permission's, made with the agent's tool set
// (permission.ToolSet). docs/agents.md gives each protocol and its
// source.
//
// # Adding an agent
//
// A new agent's adapter is a package here shaped like agents/codex: Parse
// (its payload into a hookcall.Call) and Answer (a decision into its
// reply). Then it is wired in where each command looks it up: a row of
// hookAgents in cmd/cordon/hook_agents.go ('cordon hook NAME'), its
// settings file in agents/setup's agents ('cordon init NAME'), and
// its tool names as a permission.ToolSet (permission/tools.go). To run the agent itself inside
// 'cordon run --agent NAME', its state directories and API hosts are an
// entry of workspace.AgentCLIs.
package agents
