package detect

import "syscall"

func kernelID() (release, boot string) {
	release, _ = syscall.Sysctl("kern.osrelease")
	boot, _ = syscall.Sysctl("kern.bootsessionuuid")
	return release, boot
}

// policyID keys a cached Seatbelt verdict to the profile the probe
// compiled: a cordon whose profile changed must probe again.
func policyID() string { return seatbeltProbeID() }

func osProductVersion() string {
	v, _ := syscall.Sysctl("kern.osproductversion")
	return v
}

// insideBwrap: bwrap exists only on Linux.
var insideBwrap = func() bool { return false }

// insideNative: the native backend exists only on Linux.
var insideNative = func() bool { return false }

// insideLandlock: the landlock backend exists only on Linux.
var insideLandlock = func() bool { return false }
