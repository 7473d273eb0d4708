package launcher

// apartFromAgent: Seatbelt has no nested domain to put the agent's
// commands in (docs/threat-model.md, "Secrets in the environment").
func apartFromAgent() {}
