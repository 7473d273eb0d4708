package detect

import "testing"

// Only a mount of one of cordon's masks at its state directory marks a
// sandbox as cordon's: bubblewrap as pid 1 is every bubblewrap sandbox.
func TestMaskedIn(t *testing.T) {
	const sd = "/home/u/.local/state/cordon"
	mask := "412 398 0:31 /home/u/.local/state/cordon/run/masks/85ee0ce9 /home/u/.local/state/cordon ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
	for _, tt := range []struct {
		name, mountinfo, dir, alt string
		want                      bool
	}{
		{"cordon's mask", "1 0 0:1 / / rw - ext4 /dev/vda rw\n" + mask, sd, "", true},
		{"through the resolved path", mask, "/home/u/link/cordon", sd, true},
		{"no mount there (a foreign bubblewrap)", "1 0 0:1 / / rw - ext4 /dev/vda rw\n", sd, "", false},
		{"a bind that is no mask", "412 398 0:31 /home/u/.local/state/cordon /home/u/.local/state/cordon rw - ext4 /dev/vda rw\n", sd, "", false},
		{"a mask elsewhere", "412 398 0:31 /x/run/masks/1 /home/u/other rw - ext4 /dev/vda rw\n", sd, "", false},
		{"escaped spaces", `9 1 0:3 /s\040d/run/masks/a /home/u\040v/st ro - ext4 x rw` + "\n", "/home/u v/st", "", true},
	} {
		if got := maskedIn(tt.mountinfo, tt.dir, tt.alt); got != tt.want {
			t.Errorf("%s: maskedIn = %v, want %v", tt.name, got, tt.want)
		}
	}
}
