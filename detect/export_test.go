package detect

// Reset gives tests a fresh in-process state, as a new process would have.
var Reset = reset

// FakeInsideBwrap makes the nested check see (or not see) a bwrap pid 1.
func FakeInsideBwrap(v bool) (restore func()) {
	old := insideBwrap
	insideBwrap = func() bool { return v }
	return func() { insideBwrap = old }
}

// AutoLinux is auto's choice on Linux among the results get gives.
var AutoLinux = autoLinux
