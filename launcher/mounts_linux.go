package launcher

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// eachMountinfo calls f with the mountinfo file of one process of each
// mount namespace this process may look at, its own included.
func eachMountinfo(f func(file string)) {
	seen := map[string]bool{}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, d := range procs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		ns, err := os.Readlink("/proc/" + d.Name() + "/ns/mnt")
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		f("/proc/" + d.Name() + "/mountinfo")
	}
}

// mountedMasks returns which of the masks named in keys, under the mask
// root dir, some mount namespace this process may look at mounts: a mount
// of the same file system whose source directory (mountinfo's root
// field, relative to the file system) is that mask's. Where the mask
// root's own place cannot be worked out, any mount from a directory
// masks/KEY counts (it keeps more, never less).
func mountedMasks(dir string, keys map[string]bool) map[string]bool {
	found := map[string]bool{}
	if len(keys) == 0 {
		return found
	}
	dev, rel := fsPath(dir)
	eachMountinfo(func(file string) {
		mountFields(file, func(d, root, _ string) {
			parent, key := filepath.Split(root)
			parent = filepath.Clean(parent)
			if !keys[key] {
				return
			}
			if rel == "" && filepath.Base(parent) == "masks" || d == dev && parent == rel {
				found[key] = true
			}
		})
	})
	return found
}

// fsPath is where dir lies in its file system, as mountinfo's root field
// would name it, and that file system's device (major:minor), from this
// namespace's mount whose mount point is dir's longest prefix; "" when
// there is none.
func fsPath(dir string) (dev, rel string) {
	best := -1
	mountFields("/proc/self/mountinfo", func(d, root, point string) {
		if point != "/" && dir != point && !strings.HasPrefix(dir, point+"/") {
			return
		}
		if len(point) > best {
			best = len(point)
			dev, rel = d, filepath.Join(root, strings.TrimPrefix(dir, point))
		}
	})
	return dev, rel
}

// mountFields calls f with the device (major:minor), the root and the
// mount point of each mount one mountinfo file lists, unescaped.
func mountFields(file string, f func(dev, root, point string)) {
	fd, err := os.Open(file)
	if err != nil {
		return
	}
	defer fd.Close()
	sc := bufio.NewScanner(fd)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 6)
		if len(fields) < 5 {
			continue
		}
		f(fields[2], unescapeMount(fields[3]), unescapeMount(fields[4]))
	}
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, \011,
// \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
