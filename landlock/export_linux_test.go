package landlock

// SweepProbes is sweepProbes, for the external tests.
var SweepProbes = sweepProbes
