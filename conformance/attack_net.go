package conformance

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"
)

func init() {
	attacks["tcp"] = func(a []string, out, errw io.Writer) int {
		// Connect straight to each HOST:PORT, past any proxy, and say
		// hello: the host's server counts what arrives.
		for _, addr := range a {
			c, err := net.DialTimeout("tcp", addr, 3*time.Second)
			if err != nil {
				fmt.Fprintln(errw, "tcp:", err)
				continue
			}
			fmt.Fprintf(c, "GET /direct HTTP/1.0\r\nHost: direct\r\n\r\n")
			io.Copy(io.Discard, c)
			c.Close()
			mark(out, "TCP")
		}
		return 0
	}
	attacks["udp"] = func(a []string, out, errw io.Writer) int {
		// Send a datagram to each HOST:PORT (DNS servers among them).
		for _, addr := range a {
			c, err := net.Dial("udp", addr)
			if err != nil {
				fmt.Fprintln(errw, "udp:", err)
				continue
			}
			if _, err := c.Write([]byte("hello from the sandbox")); err != nil {
				fmt.Fprintln(errw, "udp:", err)
			}
			c.Close()
		}
		return 0
	}
	attacks["resolve"] = func(a []string, out, errw io.Writer) int {
		// Look each name up with the system's resolver configuration.
		r := &net.Resolver{PreferGo: true}
		for _, n := range a {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			addrs, err := r.LookupHost(ctx, n)
			cancel()
			if err != nil {
				fmt.Fprintln(errw, "resolve:", err)
				continue
			}
			fmt.Fprintln(out, n, addrs)
			mark(out, "RESOLVED")
		}
		return 0
	}
}
