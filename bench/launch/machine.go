//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

func printMachine(ws string) {
	fmt.Println("== machine")
	fmt.Printf("nproc: %d   %s\n", runtime.NumCPU(), firstLine(cpuModel()))
	fmt.Printf("kernel: %s\n", readTrim("/proc/sys/kernel/osrelease"))
	if p, err := exec.LookPath("bwrap"); err == nil {
		out, _ := exec.Command(p, "--version").Output()
		fmt.Printf("bwrap: %s (%s)\n", strings.TrimSpace(string(out)), p)
	}
	fmt.Printf("go: %s\n", runtime.Version())
	fmt.Printf("workspace disk: %s\n", diskOf(ws))
	fmt.Printf("load average at start: %s\n", readTrim("/proc/loadavg"))
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "model name") {
			_, v, _ := strings.Cut(line, ":")
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// diskOf names the filesystem and block device holding dir, and whether
// the device says it is rotational.
func diskOf(dir string) string {
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil {
		return "?"
	}
	maj, mnr := (st.Dev>>8)&0xfff, (st.Dev&0xff)|((st.Dev>>12)&0xfff00)
	fstype, src := "?", "?"
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 9 && f[2] == fmt.Sprintf("%d:%d", maj, mnr) {
			if i := slices.Index(f, "-"); i >= 0 && i+2 < len(f) {
				fstype, src = f[i+1], f[i+2]
			}
			break
		}
	}
	rot := readTrim(fmt.Sprintf("/sys/dev/block/%d:%d/queue/rotational", maj, mnr))
	if rot == "" {
		rot = readTrim(fmt.Sprintf("/sys/block/%s/queue/rotational", filepath.Base(src)))
	}
	kind := map[string]string{"0": "non-rotational", "1": "rotational"}[rot]
	if kind == "" {
		kind = "rotational: unknown"
	}
	return fmt.Sprintf("%s on %s (%s)", fstype, src, kind)
}

func readTrim(name string) string {
	b, _ := os.ReadFile(name)
	return strings.TrimSpace(string(b))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func countLines(name string) int {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}
