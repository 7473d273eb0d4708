package shown

import (
	"errors"
	"strings"
	"testing"
)

// TestSayfEscapes: a name a sandbox planted (an OSC 52 clipboard write, a
// title, a screen clear, a C1 CSI, an invalid byte) reaches the init's
// stderr escaped, with cordon's own words around it as they were.
func TestSayfEscapes(t *testing.T) {
	var b strings.Builder
	name := "ws/x\x1b]52;c;cHduZWQ=\x07\x1b]0;title\x07\x1b[2J\xc2\x9b\xff"
	Sayf(&b, "%s: %v", name, errors.New("not the object the plan was made for"))
	got := b.String()
	for _, c := range got {
		if c < 0x20 && c != '\n' || c == 0x7f || c >= 0x80 && c < 0xa0 || c == 0xfffd {
			t.Fatalf("raw control or invalid byte %q printed: %q", c, got)
		}
	}
	if !strings.HasPrefix(got, "cordon: sandbox: ws/x") || !strings.HasSuffix(got, ": not the object the plan was made for\n") {
		t.Fatalf("the message around the name changed: %q", got)
	}
}
