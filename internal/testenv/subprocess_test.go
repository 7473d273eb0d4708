package testenv

import (
	"os"
	"strings"
	"testing"
)

func TestSubprocess(t *testing.T) {
	out, err := Subprocess(t, "TestHelperEcho", "a b\tc").CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "arg=[a b\tc]") {
		t.Fatalf("the child did not run the helper with its argument:\n%s", out)
	}
}

func TestHelperEcho(t *testing.T) {
	arg := InSubprocess(t)
	os.Stdout.WriteString("arg=[" + arg + "]\n")
}
