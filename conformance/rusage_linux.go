package conformance

// maxrssUnit is ru_maxrss's unit in bytes: kilobytes on Linux.
const maxrssUnit = 1024
