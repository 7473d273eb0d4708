package conformance

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// proxyAddr is the proxy's address, from HTTP_PROXY inside the sandbox.
func proxyAddr() (string, error) {
	u, err := url.Parse(os.Getenv("HTTP_PROXY"))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("no proxy in HTTP_PROXY (%q)", os.Getenv("HTTP_PROXY"))
	}
	return u.Host, nil
}

// proxyAuth is the Proxy-Authorization line of HTTP_PROXY's credential
// (a proxy on the host's loopback, macOS and the landlock backend, asks
// for one), "" when it has none.
func proxyAuth() string {
	u, err := url.Parse(os.Getenv("HTTP_PROXY"))
	if err != nil || u.User == nil {
		return ""
	}
	return "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.String())) + "\r\n"
}

func init() {
	attacks["proxy-flood"] = proxyFlood
	attacks["proxy-names"] = proxyNames
	attacks["proxy-hold"] = proxyHold
}

// proxyFlood (attack proxy-flood): a line without end sent to the proxy,
// or asked of a hostile destination: KIND TARGET MIB. Prints @@FLOODED@@
// when the proxy took every byte (or the destination's whole flood came
// back cut nowhere).
func proxyFlood(a []string, out, errw io.Writer) int {
	if len(a) != 3 {
		return usage(errw, "proxy-flood chunk-size|trailer|header|response-head HOST:PORT MIB")
	}
	mib, err := strconv.Atoi(a[2])
	if err != nil {
		return usage(errw, "proxy-flood KIND HOST:PORT MIB")
	}
	p, err := proxyAddr()
	if err != nil {
		fmt.Fprintln(errw, "proxy-flood:", err)
		return 1
	}
	c, err := net.DialTimeout("tcp", p, 10*time.Second)
	if err != nil {
		fmt.Fprintln(errw, "proxy-flood:", err)
		return 1
	}
	defer c.Close()
	t := a[1]
	auth := proxyAuth()
	heads := map[string]string{
		"chunk-size":    "POST http://" + t + "/ HTTP/1.1\r\n" + auth + "Host: " + t + "\r\nTransfer-Encoding: chunked\r\n\r\n1",
		"trailer":       "POST http://" + t + "/ HTTP/1.1\r\n" + auth + "Host: " + t + "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: ",
		"header":        "GET http://" + t + "/ HTTP/1.1\r\n" + auth + "Host: " + t + "\r\nX-H: ",
		"response-head": "GET http://" + t + "/flood-head HTTP/1.1\r\n" + auth + "Host: " + t + "\r\n\r\n",
	}
	head, ok := heads[a[0]]
	if !ok {
		return usage(errw, "proxy-flood chunk-size|trailer|header|response-head HOST:PORT MIB")
	}
	io.WriteString(c, head)
	limit := mib << 20
	if a[0] == "response-head" {
		c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		n, _ := io.Copy(io.Discard, c)
		fmt.Fprintf(out, "read %d bytes back\n", n)
		if n >= int64(limit) {
			mark(out, "FLOODED")
		}
		return 0
	}
	chunk := bytes.Repeat([]byte("1"), 64<<10)
	c.SetWriteDeadline(time.Now().Add(2 * time.Minute))
	n := 0
	for n < limit {
		m, err := c.Write(chunk)
		n += m
		if err != nil {
			break
		}
	}
	fmt.Fprintf(out, "wrote %d bytes of one line\n", n)
	if n >= limit {
		mark(out, "FLOODED")
	}
	return 0

}

// proxyNames (attack proxy-names): N CONNECT requests for unique refused
// names of SIZE bytes, each starting with terminal control sequences (ESC
// c resets a terminal; BEL rings it).
func proxyNames(a []string, out, errw io.Writer) int {
	if len(a) != 2 {
		return usage(errw, "proxy-names N SIZE")
	}
	n, err1 := strconv.Atoi(a[0])
	size, err2 := strconv.Atoi(a[1])
	if err1 != nil || err2 != nil {
		return usage(errw, "proxy-names N SIZE")
	}
	p, err := proxyAddr()
	if err != nil {
		fmt.Fprintln(errw, "proxy-names:", err)
		return 1
	}
	pad := strings.Repeat("a", size)
	refused := 0
	for i := range n {
		c, err := net.DialTimeout("tcp", p, 10*time.Second)
		if err != nil {
			fmt.Fprintln(errw, "proxy-names:", err)
			return 1
		}
		name := "\x1bc\x07\x00" + strconv.Itoa(i) + pad[:size-8]
		fmt.Fprintf(c, "CONNECT %s.example:443 HTTP/1.1\r\n%s\r\n", name, proxyAuth())
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		st, _ := bufio.NewReader(c).ReadString('\n')
		if strings.Contains(st, " 403 ") {
			refused++
		}
		c.Close()
	}
	fmt.Fprintf(out, "%d of %d refused\n", refused, n)
	if refused == n {
		mark(out, "REFUSED")
	}
	return 0

}

// proxyHold (attack proxy-hold): N connections to the proxy held open,
// never read from: half are tunnels (CONNECT) to TARGET asking its
// /flood-head, whose answer the proxy must not buffer for a client that
// does not read; half are heads left unfinished. Writes FILE once all are
// open, then waits to be killed with the sandbox.
func proxyHold(a []string, out, errw io.Writer) int {
	if len(a) != 3 {
		return usage(errw, "proxy-hold N HOST:PORT FILE")
	}
	n, err := strconv.Atoi(a[0])
	if err != nil {
		return usage(errw, "proxy-hold N HOST:PORT FILE")
	}
	p, err := proxyAddr()
	if err != nil {
		fmt.Fprintln(errw, "proxy-hold:", err)
		return 1
	}
	var held []net.Conn
	for i := range n {
		c, err := net.DialTimeout("tcp", p, 10*time.Second)
		if err != nil {
			fmt.Fprintln(errw, "proxy-hold:", err)
			break
		}
		held = append(held, c)
		if i%2 == 1 {
			io.WriteString(c, "GET http://"+a[1]+"/ HTTP/1.1\r\n"+proxyAuth()+"X-Partial: "+strings.Repeat("p", 32<<10))
			continue
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n%s\r\n", a[1], proxyAuth())
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReaderSize(c, 64)
		st, _ := br.ReadString('\n')
		if !strings.Contains(st, " 200 ") {
			fmt.Fprintf(errw, "proxy-hold: CONNECT: %q\n", st)
			continue
		}
		br.ReadString('\n') // the empty line ending the proxy's answer
		fmt.Fprintf(c, "GET /flood-head HTTP/1.1\r\nHost: %s\r\n\r\n", a[1])
	}
	fmt.Fprintf(out, "holding %d connections\n", len(held))
	if len(held) == n {
		mark(out, "HOLDING")
	}
	if err := os.WriteFile(a[2], nil, 0o644); err != nil {
		fmt.Fprintln(errw, "proxy-hold:", err)
		return 1
	}
	select {} // until the sandbox ends

}
