//go:build linux

// Command mounts measures the kernel's floor for a sandbox of n read-only
// roots: in a user and mount namespace of its own, n sibling directories
// are each cloned from a second view of the tree (open_tree), made
// read-only (mount_setattr) and attached over themselves (move_mount), the
// way package native builds a sandbox, with no mountinfo read between
// them (BENCHMARKS.md, "Large workspaces").
//
//	go build -o /tmp/mounts ./bench/mounts && unshare -Urm /tmp/mounts -n 100,1000,2000,4000
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	ns := flag.String("n", "100,1000,2000,4000", "comma-separated root counts")
	flag.Parse()
	for _, s := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(s)
		if err == nil {
			err = measure(n)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mounts:", err)
			os.Exit(1)
		}
	}
}

func measure(n int) error {
	tmp, err := os.MkdirTemp("", "cordon-mounts-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	base, view := filepath.Join(tmp, "t"), filepath.Join(tmp, "view")
	for i := range n {
		if err := os.MkdirAll(filepath.Join(base, fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			return err
		}
	}
	if err := os.Mkdir(view, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("needs a mount namespace of its own (run under unshare -Urm): %w", err)
	}
	if err := bind(base, view, 0); err != nil {
		return err
	}
	start := time.Now()
	for i := range n {
		d := fmt.Sprintf("d%05d", i)
		if err := bind(filepath.Join(view, d), filepath.Join(base, d), unix.MOUNT_ATTR_RDONLY); err != nil {
			return err
		}
	}
	fmt.Printf("%5d read-only roots: %v\n", n, time.Since(start).Round(10*time.Microsecond))
	unix.Unmount(base, unix.MNT_DETACH)
	return unix.Unmount(view, unix.MNT_DETACH)
}

func bind(src, dst string, attrs uint64) error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", src, err)
	}
	defer unix.Close(fd)
	if attrs != 0 {
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attrs}); err != nil {
			return fmt.Errorf("mount_setattr %s: %w", src, err)
		}
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount %s: %w", dst, err)
	}
	return nil
}
