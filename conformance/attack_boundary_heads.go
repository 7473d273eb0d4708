package conformance

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

func init() {
	attacks["proxy-tiny-headers"] = func(a []string, out, errw io.Writer) int {
		// N connections at once, each sending the proxy a head of
		// LINES distinct three-letter headers without values, LF only,
		// for a name no pattern allows; each waits for the answer.
		// Prints @@ANSWERED@@ when every head was answered: the proxy
		// read each one, whole or up to its bound.
		if len(a) != 2 {
			return usage(errw, "proxy-tiny-headers N LINES")
		}
		n, err1 := strconv.Atoi(a[0])
		lines, err2 := strconv.Atoi(a[1])
		if err1 != nil || err2 != nil {
			return usage(errw, "proxy-tiny-headers N LINES")
		}
		p, err := proxyAddr()
		if err != nil {
			fmt.Fprintln(errw, "proxy-tiny-headers:", err)
			return 1
		}
		const abc = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		var b strings.Builder
		b.WriteString("GET http://refused.example/ HTTP/1.1\n")
		for i := range lines {
			b.WriteByte(abc[i/(52*52)%52])
			b.WriteByte(abc[i/52%52])
			b.WriteByte(abc[i%52])
			b.WriteString(":\n")
		}
		b.WriteString("\n")
		head := b.String()
		var wg sync.WaitGroup
		var mu sync.Mutex
		answered := 0
		for range n {
			c, err := net.DialTimeout("tcp", p, 10*time.Second)
			if err != nil {
				fmt.Fprintln(errw, "proxy-tiny-headers:", err)
				return 1
			}
			defer c.Close()
			wg.Add(2)
			go func() {
				defer wg.Done()
				c.SetWriteDeadline(time.Now().Add(time.Minute))
				io.WriteString(c, head) // fails once the proxy answers and closes
			}()
			go func() {
				defer wg.Done()
				c.SetReadDeadline(time.Now().Add(time.Minute))
				st, err := bufio.NewReader(c).ReadString('\n')
				if err == nil && strings.HasPrefix(st, "HTTP/1.1 ") {
					mu.Lock()
					answered++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		fmt.Fprintf(out, "%d of %d heads answered\n", answered, n)
		if answered == n {
			mark(out, "ANSWERED")
		}
		return 0
	}
}
