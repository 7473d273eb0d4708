package launcher

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

func TestSecretEnvName(t *testing.T) {
	for _, n := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN",
		"AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "aws_region", "PGPASSWORD", "MY_CREDENTIALS", "npm_config__auth",
		"NPM_CONFIG__AUTHTOKEN", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "client_secret", "KEYRING",
		"HTTP_AUTHORIZATION", "X_AUTH", "GIT_AUTHOR_TOKEN", "GIT_CONFIG_KEY_X", "GIT_CONFIG_KEY_"} {
		require.True(t, SecretEnvName(n), n)
	}
	for _, n := range []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL", "GOCACHE",
		"GOPATH", "HTTP_PROXY", "XAUTHORITY", "DISPLAY", "EDITOR", "CI", "PWD", "AUTHOR", "SSH_CONNECTION",
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_CONFIG_KEY_0", "GIT_CONFIG_KEY_12", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_COUNT"} {
		require.False(t, SecretEnvName(n), n)
	}
}

func TestWithholdSecrets(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=t", "NPM_TOKEN=n", "AWS_PROFILE=p", "FOO=1", "GITHUB_TOKEN=again", "ODD"}
	kept, withheld := WithholdSecrets(env, []string{"NPM_TOKEN"})
	require.Equal(t, []string{"PATH=/bin", "NPM_TOKEN=n", "FOO=1", "ODD"}, kept)
	require.Equal(t, []string{"AWS_PROFILE", "GITHUB_TOKEN"}, withheld, "sorted, each once, names only")
}

// TestEnvDefaultWithholds: the Go API's default environment (Env nil) is
// the launcher's without its secrets; InheritEnv passes them; an Env
// given passes as it is.
func TestEnvDefaultWithholds(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	t.Setenv("GITHUB_TOKEN", "cordon-test-token")
	t.Setenv("CORDON_TEST_PLAIN", "plain")
	show := `echo "t=${GITHUB_TOKEN-unset} p=${CORDON_TEST_PLAIN-unset}"`
	out, err := Command(workspacePolicy(t, ws), "sh", "-c", show).Output()
	require.NoError(t, err)
	require.Equal(t, "t=unset p=plain\n", string(out))

	c := Command(workspacePolicy(t, ws), "sh", "-c", show)
	c.InheritEnv = true
	out, err = c.Output()
	require.NoError(t, err)
	require.Equal(t, "t=cordon-test-token p=plain\n", string(out))

	c = Command(workspacePolicy(t, ws), "sh", "-c", show)
	c.PassEnv = []string{"GITHUB_TOKEN"}
	out, err = c.Output()
	require.NoError(t, err)
	require.Equal(t, "t=cordon-test-token p=plain\n", string(out), "named, it passes")

	c = Command(workspacePolicy(t, ws), "sh", "-c", show)
	c.Env = []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=given"}
	out, err = c.Output()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(out), "t=given "), string(out))
}
