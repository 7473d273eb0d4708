//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// result is one timed launch.
type result struct {
	wall time.Duration
	cpu  time.Duration // user + system of the process and the descendants it reaped
}

// sample runs cmd in dir with env (stdin and, unless the caller set it,
// stdout on /dev/null; stderr kept for the error) and returns its wall
// time.
func sample(cmd *exec.Cmd, env []string, dir string) (result, error) {
	var stderr bytes.Buffer
	cmd.Env, cmd.Dir, cmd.Stderr = env, dir, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " ")[:min(200, len(strings.Join(cmd.Args, " ")))], err, stderr.String())
	}
	return result{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}

// measureRSS runs cmd under /usr/bin/time -f %M and returns its peak RSS
// in KiB. Not wait4 on a child of this process: Go starts children with
// vfork, and exec folds the parent's high-water RSS into the child's
// ru_maxrss, so every child would report at least this harness's RSS.
// GNU time forks from a ~1 MiB process; /bin/true shows that floor.
func measureRSS(cmd *exec.Cmd, env []string, dir string) (int64, error) {
	out, err := os.CreateTemp("", "rss-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(out.Name())
	out.Close()
	cmd.Args = append([]string{"/usr/bin/time", "-f", "%M", "-o", out.Name()}, cmd.Args...)
	cmd.Path = "/usr/bin/time"
	cmd.Err = nil
	if _, err := sample(cmd, env, dir); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return 0, err
	}
	var kib int64
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &kib); err != nil {
		return 0, fmt.Errorf("time -f %%M: %q: %w", b, err)
	}
	return kib, nil
}

// series is one variant's samples: wall times and, from measureRSS, peak
// RSS.
type series struct {
	res []result
	rss []int64 // KiB, from measureRSS
}

func (s *series) add(r result)     { s.res = append(s.res, r) }
func (s *series) addRSS(kib int64) { s.rss = append(s.rss, kib) }
func (s series) rssCount() int     { return len(s.rss) }

func (s series) walls() []time.Duration {
	w := make([]time.Duration, len(s.res))
	for i, r := range s.res {
		w[i] = r.wall
	}
	slices.Sort(w)
	return w
}

// pct is the nearest-rank percentile.
func (s series) pct(p float64) time.Duration {
	w := s.walls()
	if len(w) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(w)))) - 1
	return w[max(i, 0)]
}

func (s series) median() time.Duration { return s.pct(50) }

// cpuMedian is the median CPU time of the samples.
func (s series) cpuMedian() time.Duration {
	if len(s.res) == 0 {
		return 0
	}
	c := make([]time.Duration, len(s.res))
	for i, r := range s.res {
		c[i] = r.cpu
	}
	slices.Sort(c)
	return c[(len(c)-1)/2]
}
func (s series) p95() time.Duration { return s.pct(95) }

func (s series) rssMedian() float64 {
	r := slices.Sorted(slices.Values(s.rss))
	if len(r) == 0 {
		return 0
	}
	return float64(r[(len(r)-1)/2]) / 1024
}

func (s series) rssMax() float64 {
	var m int64
	for _, x := range s.rss {
		m = max(m, x)
	}
	return float64(m) / 1024
}

func (s series) print(name string) {
	if len(s.res) == 0 {
		return
	}
	rss := "-"
	if len(s.rss) > 0 {
		rss = fmt.Sprintf("%.1f MiB", s.rssMax())
	}
	fmt.Printf("%-44s %6d %9s %9s %9s %12s\n", name, len(s.res), ms(s.median()), ms(s.p95()), ms(s.pct(0)), rss)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }

func ratio(x, y time.Duration) float64 { return float64(x) / float64(y) }

// pairedMedian is the median of x's i-th sample minus y's, over the
// rounds both have: with the variants alternated, each pair was taken a
// moment apart, so a slow moment of the machine weighs on both sides.
func pairedMedian(x, y series) time.Duration {
	n := min(len(x.res), len(y.res))
	if n == 0 {
		return 0
	}
	d := make([]time.Duration, n)
	for i := range n {
		d[i] = x.res[i].wall - y.res[i].wall
	}
	slices.Sort(d)
	return d[(n-1)/2]
}
