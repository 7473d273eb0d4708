package launcher

import (
	"slices"
	"strings"
)

// secretSockets are variables that name no secret but hand one out to
// whoever reaches what they point at: the SSH agent signs with the
// user's keys, the GPG agent decrypts, the session bus unlocks the
// keyring (docs/threat-model.md, "Secrets in the environment").
var secretSockets = []string{"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS"}

// secretWords mark a secret anywhere in a variable's name, in any case:
// ANTHROPIC_API_KEY, GITHUB_TOKEN, PGPASSWORD, AZURE_CLIENT_SECRET.
var secretWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"}

// SecretEnvName reports whether the variable name marks a secret: it
// holds KEY, SECRET, TOKEN, PASSWORD, CREDENTIAL or _AUTH (npm's
// npm_config__auth, HTTP_AUTHORIZATION; not git's GIT_AUTHOR_NAME), in
// any case, or starts with AWS_, or is a socket that hands out
// credentials (SSH_AUTH_SOCK, GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS).
// git's GIT_CONFIG_KEY_<n> names a configuration key, whose value is in
// GIT_CONFIG_VALUE_<n>: withholding the one would break git, not keep
// anything.
func SecretEnvName(name string) bool {
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, "AWS_") || slices.Contains(secretSockets, up) {
		return true
	}
	if n, ok := strings.CutPrefix(up, "GIT_CONFIG_KEY_"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	for rest := up; ; {
		i := strings.Index(rest, "_AUTH")
		if i < 0 {
			return false
		}
		rest = rest[i+len("_AUTH"):]
		if author := strings.HasPrefix(rest, "OR") && (len(rest) == 2 || rest[2] == '_' || rest[2] == 'S'); !author {
			return true
		}
	}
}

// WithholdSecrets is env without the variables whose names mark a secret
// (SecretEnvName), but those named in pass; withheld are the names left
// out, sorted, each once. It is the filter every launch's inherited
// environment goes through by default (Cmd.Env nil, cordon run without
// --inherit-env); what cordon itself sets afterwards (TMPDIR,
// CORDON_SANDBOX, the proxy's variables, the caches') is not filtered.
func WithholdSecrets(env, pass []string) (kept, withheld []string) {
	kept = make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if SecretEnvName(name) && !slices.Contains(pass, name) {
			if !slices.Contains(withheld, name) {
				withheld = append(withheld, name)
			}
			continue
		}
		kept = append(kept, kv)
	}
	slices.Sort(withheld)
	return kept, withheld
}
