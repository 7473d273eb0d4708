package policy

import (
	"fmt"
	"io/fs"
	"os"
)

// A HostSocket is a Unix socket on the host the user hands over to the
// sandbox (--allow-unix-socket; a policy file's "allowUnixSockets"): its
// path, resolved, and the socket's identity when it was resolved. The
// gate admits a connect to that inode alone: a socket renamed over the
// path since is another inode, and stays out.
type HostSocket struct {
	Path string `json:"path"`
	ID   FileID `json:"id"`
}

// ResolveSocket resolves path (absolute: Resolve) and checks that it
// names a Unix socket, whose identity it records.
func ResolveSocket(path string) (HostSocket, error) {
	p, err := Resolve(path)
	if err != nil {
		return HostSocket{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return HostSocket{}, err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return HostSocket{}, fmt.Errorf("%s is not a Unix socket (%s)", p, kindOf(fi.Mode()))
	}
	return HostSocket{Path: p, ID: fileID(fi)}, nil
}

// kindOf names a file's type for an error.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m.Type() == fs.ModeNamedPipe:
		return "a FIFO"
	case m.Type()&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a socket"
}
