package detect

// Reset gives tests a fresh in-process state, as a new process would have.
var Reset = reset
