package detect

import "syscall"

func kernelID() (release, boot string) {
	release, _ = syscall.Sysctl("kern.osrelease")
	boot, _ = syscall.Sysctl("kern.bootsessionuuid")
	return release, boot
}

func policyID() string { return "" }

func osProductVersion() string {
	v, _ := syscall.Sysctl("kern.osproductversion")
	return v
}

// insideBwrap: bwrap exists only on Linux.
var insideBwrap = func() bool { return false }
