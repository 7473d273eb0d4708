//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// netThroughput downloads cfg.netMiB MiB from a server on the host's
// loopback with curl, straight from the host and from inside a sandbox
// through the proxy (dl.localhost:PORT, named exactly), alternated, and
// samples the peak RSS (VmHWM) of the cordon process that runs the proxy.
func netThroughput(cfg config, cordon string, env []string, ws string) error {
	curl, err := exec.LookPath("curl")
	if err != nil {
		fmt.Println("\n== network allowlist throughput: skipped (no curl)")
		return nil
	}
	size := int64(cfg.netMiB) << 20
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 131)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		for n := int64(0); n < size; n += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	directCmd := exec.Command(curl, "-sS", "--noproxy", "*", "-o", "/dev/null", "http://127.0.0.1:"+port+"/big")
	proxiedCmd := func() *exec.Cmd {
		return exec.Command(cordon, "run", "--workspace", ws, "--allow-domain", "dl.localhost:"+port, "--",
			curl, "-sS", "--noproxy", "", "-o", "/dev/null", "http://dl.localhost:"+port+"/big")
	}
	var direct, proxied series
	var hwm []int64
	for i := range cfg.netN {
		steps := []func() error{
			func() error {
				cmd := exec.Command(directCmd.Path, directCmd.Args[1:]...)
				s, err := sample(cmd, env, ws)
				direct.add(s)
				return err
			},
			func() error {
				cmd := proxiedCmd()
				cmd.Env, cmd.Dir = env, ws
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				start := time.Now()
				if err := cmd.Start(); err != nil {
					return err
				}
				peak := make(chan int64, 1)
				stop := make(chan struct{})
				go func() {
					var last int64
					t := time.NewTicker(5 * time.Millisecond)
					defer t.Stop()
					for {
						if v := vmHWM(cmd.Process.Pid); v > 0 {
							last = v
						}
						select {
						case <-stop:
							peak <- last
							return
						case <-t.C:
						}
					}
				}()
				err := cmd.Wait()
				close(stop)
				proxied.add(result{wall: time.Since(start)})
				hwm = append(hwm, <-peak)
				if err != nil {
					return fmt.Errorf("%v: %s", err, stderr.String())
				}
				return nil
			},
		}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return err
			}
		}
	}
	mibs := func(t time.Duration) float64 { return float64(cfg.netMiB) / t.Seconds() }
	slices.Sort(hwm)
	fmt.Printf("\n== network allowlist throughput: %d MiB over HTTP from the host's loopback with curl, %d rounds alternated\n", cfg.netMiB, cfg.netN)
	fmt.Printf("direct (curl on the host):                 median %s = %.0f MiB/s\n", ms(direct.median()), mibs(direct.median()))
	fmt.Printf("through the proxy (cordon run, curl inside): median %s = %.0f MiB/s (a launch included)\n", ms(proxied.median()), mibs(proxied.median()))
	fmt.Printf("cordon's own peak RSS (VmHWM) during the proxied download: median %.1f MiB, max %.1f MiB (target ≤ 10 MiB)\n",
		float64(hwm[len(hwm)/2])/1024, float64(hwm[len(hwm)-1])/1024)
	return nil
}

// vmHWM is the peak resident set of process pid in KiB, 0 when unknown.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kib int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kib)
			return kib
		}
	}
	return 0
}
