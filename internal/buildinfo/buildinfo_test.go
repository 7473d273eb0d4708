package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, c := range []struct {
		in   Info
		want string
	}{
		{Info{Version: "v1.2.3", Revision: "0123456789abcdef", Time: "2026-12-07T10:00:00Z", Go: "go1.26.8", Platform: "linux/amd64"},
			"cordon v1.2.3 (0123456789ab 2026-12-07T10:00:00Z) go1.26.8 linux/amd64"},
		{Info{Version: "devel", Revision: "abc", Modified: true, Go: "go1.26.8", Platform: "darwin/arm64"},
			"cordon devel (abc, modified) go1.26.8 darwin/arm64"},
		{Info{Version: "devel", Go: "go1.26.8", Platform: "linux/arm64"}, "cordon devel go1.26.8 linux/arm64"},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestGet(t *testing.T) {
	i := Get()
	if i.Version == "" || i.Go != runtime.Version() || !strings.Contains(i.Platform, "/") {
		t.Errorf("Get() = %+v", i)
	}
	old := Version
	defer func() { Version = old }()
	Version = "v9.9.9"
	if got := Get().Version; got != "v9.9.9" {
		t.Errorf("a stamped Version: got %q", got)
	}
}
