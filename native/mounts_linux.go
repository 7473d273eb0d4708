package native

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resolveBeneath opens rel below dir without following any symlink: the
// roots are canonical, so a link on the way is a swap made after the
// policy was resolved, and fails the launch.
func resolveBeneath(dir int, rel string) (int, error) {
	if rel == "" {
		rel = "."
	}
	return unix.Openat2(dir, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// attach clones the host's tree at src (below old, with the mounts under
// it), sets attrs on every mount of the clone and attaches it at dst
// (below dstDir, or a path when dstDir is AT_FDCWD). check, when set, is
// called with the source before it is cloned. The descriptors it opens
// go to done, closed with others later, or are closed on return when
// done is nil.
func attach(old int, src string, attrs uint64, dstDir int, dst string, check func(fd int) error, done *fdBatch) error {
	sfd, err := resolveBeneath(old, src)
	if err != nil {
		return fmt.Errorf("open %s: %w", "/"+src, err)
	}
	defer done.add(sfd)
	if check != nil {
		if err := check(sfd); err != nil {
			return err
		}
	}
	tree, err := cloneTree(sfd, attrs)
	if err != nil {
		return fmt.Errorf("%w (%s)", err, "/"+src)
	}
	defer done.add(tree)
	if dstDir == unix.AT_FDCWD {
		return unix.MoveMount(tree, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
	}
	dfd, err := resolveBeneath(dstDir, dst)
	if err != nil {
		return fmt.Errorf("mount point: %w", err)
	}
	defer done.add(dfd)
	return unix.MoveMount(tree, "", dfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// fdBatch holds descriptors the mount loop is done with, to close many
// at once: closed one by one, the three of each mount took a quarter of
// the loop's time. They are closed with close_range over each run of
// consecutive numbers (one run, as a rule: nothing else opens or closes
// descriptors in the loop) when fdBatchSize have gathered, and at flush.
type fdBatch struct{ fds []int }

const fdBatchSize = 768

// add closes fd now on a nil batch.
func (b *fdBatch) add(fd int) {
	if b == nil {
		unix.Close(fd)
		return
	}
	b.fds = append(b.fds, fd)
	if len(b.fds) >= fdBatchSize {
		b.flush()
	}
}

func (b *fdBatch) flush() {
	slices.Sort(b.fds)
	for i := 0; i < len(b.fds); {
		j := i
		for j+1 < len(b.fds) && b.fds[j+1] == b.fds[j]+1 {
			j++
		}
		if err := unix.CloseRange(uint(b.fds[i]), uint(b.fds[j]), 0); err != nil {
			for _, fd := range b.fds[i : j+1] {
				unix.Close(fd)
			}
		}
		i = j + 1
	}
	b.fds = b.fds[:0]
}

// noOpenTreeAttr is set once open_tree_attr is known to be missing
// (Linux before 6.15, or a seccomp profile that refuses it).
var noOpenTreeAttr bool

// cloneTree clones the tree at sfd with the mounts below it and sets
// attrs on every mount of the clone: in one call with open_tree_attr,
// else open_tree then mount_setattr.
func cloneTree(sfd int, attrs uint64) (int, error) {
	return cloneTreeAt(sfd, "", unix.AT_EMPTY_PATH, attrs)
}

// cloneTreeAt is cloneTree of name below dir, with lookup flags (no
// symlink followed at the end, or an empty path).
func cloneTreeAt(dir int, name string, lookup int, attrs uint64) (int, error) {
	flags := unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_RECURSIVE | lookup
	attr := unix.MountAttr{Attr_set: attrs}
	if !noOpenTreeAttr {
		p, err := unix.BytePtrFromString(name)
		if err != nil {
			return -1, err
		}
		fd, _, errno := unix.Syscall6(unix.SYS_OPEN_TREE_ATTR, uintptr(dir), uintptr(unsafe.Pointer(p)),
			uintptr(flags), uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.ENOSYS, unix.EPERM:
			noOpenTreeAttr = true
		default:
			return -1, fmt.Errorf("open_tree_attr: %w", errno)
		}
	}
	tree, err := unix.OpenTree(dir, name, uint(flags))
	if err != nil {
		return -1, fmt.Errorf("open_tree: %w", err)
	}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		unix.Close(tree)
		return -1, fmt.Errorf("mount_setattr: %w", err)
	}
	return tree, nil
}

// mountOne applies one mount of the policy's list.
func mountOne(old, nr int, m Mount, done *fdBatch) error {
	src := m.Src
	if src == "" {
		src = m.Path
	}
	attrs := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
	if m.Readonly {
		attrs |= unix.MOUNT_ATTR_RDONLY
	}
	var check func(int) error
	if m.Ino != 0 {
		check = func(fd int) error {
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				return err
			}
			if st.Dev != m.Dev || st.Ino != m.Ino {
				return fmt.Errorf("root %s changed while the sandbox was being prepared; refusing the launch", m.Path)
			}
			return nil
		}
	}
	if err := attach(old, rel(src), attrs, nr, rel(m.Path), check, done); err != nil {
		return fmt.Errorf("%s %s: %w", m.What, m.Path, err)
	}
	return nil
}

func rel(p string) string { return strings.TrimLeft(p, "/") }

// mountProc gives the sandbox a /proc of its pid namespace, with what it
// offers of the kernel beyond the namespaces read-only or masked
// (Spec.ProcReadonly, Spec.ProcMasked; the bwrap renderer says why).
func mountProc(s *Spec, old int) error {
	proc := newRoot + "/proc"
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount proc: %w", err)
	}
	if s.DisableUserns && !s.weakened("disable-userns") {
		// The limit of this user namespace: none may be created in it,
		// by anything inside (which has no capability to raise it again,
		// and sees /proc/sys read-only).
		if err := os.WriteFile(proc+"/sys/user/max_user_namespaces", []byte("0"), 0); err != nil {
			return fmt.Errorf("disable nested user namespaces: %w", err)
		}
	}
	for _, p := range s.ProcReadonly {
		if s.weakened("proc-sys-readonly") {
			break
		}
		q := newRoot + p
		if _, err := os.Lstat(q); err != nil {
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, q, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return fmt.Errorf("open_tree %s: %w", p, err)
		}
		err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV})
		if err == nil {
			err = unix.MoveMount(fd, "", unix.AT_FDCWD, q, unix.MOVE_MOUNT_F_EMPTY_PATH)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("read-only %s: %w", p, err)
		}
	}
	for _, p := range s.ProcMasked {
		if s.weakened("proc-keys-mask") {
			break
		}
		q := newRoot + p
		if _, err := os.Lstat(q); err != nil {
			continue
		}
		if err := attach(old, "dev/null", unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID, unix.AT_FDCWD, q, nil, nil); err != nil {
			return fmt.Errorf("mask %s: %w", p, err)
		}
	}
	return nil
}

// devNodes are the host's device nodes a sandbox gets (docs/design.md,
// section 1: devices and processes).
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// mountDev gives the sandbox a minimal /dev: a tmpfs with the usual nodes
// bound from the host, a pty instance of its own and a private /dev/shm.
func mountDev(old int) error {
	dev := newRoot + "/dev"
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, n := range devNodes {
		p := dev + "/" + n
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
		f.Close()
		if err := attach(old, "dev/"+n, unix.MOUNT_ATTR_NOSUID, unix.AT_FDCWD, p, nil, nil); err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
	}
	if err := bindConsole(old, dev); err != nil {
		return err
	}
	for name, target := range map[string]string{
		"stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
		"fd": "/proc/self/fd", "core": "/proc/kcore", "ptmx": "pts/ptmx",
	} {
		if err := os.Symlink(target, dev+"/"+name); err != nil {
			return fmt.Errorf("/dev/%s: %w", name, err)
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(dev+"/"+d, 0o755); err != nil {
			return fmt.Errorf("/dev/%s: %w", d, err)
		}
	}
	if err := unix.Mount("devpts", dev+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	if err := unix.Mount("tmpfs", dev+"/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	return nil
}

// bindConsole binds the terminal on stdin, if there is one, at
// /dev/console, as bwrap does: ttyname(3) (tty, ssh, gpg) finds the
// terminal there, the sandbox's own devpts not holding it.
func bindConsole(old int, dev string) error {
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err != nil {
		return nil
	}
	name, err := os.Readlink(oldRoot + "/proc/self/fd/0") // the host's /proc, after the pivot
	if err != nil || !strings.HasPrefix(name, "/dev/") || strings.Contains(name, "..") {
		return nil
	}
	p := dev + "/console"
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("/dev/console: %w", err)
	}
	f.Close()
	if err := attach(old, strings.TrimPrefix(name, "/"), unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, unix.AT_FDCWD, p, nil, nil); err != nil {
		return fmt.Errorf("/dev/console: %w", err)
	}
	return nil
}

// rootOfItsOwn makes newRoot a tmpfs of the sandbox's own holding each
// entry at the top of the host's tree (old): directories and files bound
// with attrs and the mounts below them, symlinks made again with the same
// target, /proc and /dev empty for the init's own mounts. The sandbox's
// "/" is then no directory of the host's, so Landlock's read rule on it
// grants what is reached through the sandbox's tree and nothing that a
// descriptor of the host's reaches: that walk up ends at the host's root,
// which has no rule. The caller makes the tmpfs read-only once the tree
// is built.
//
// Each entry costs a clone and a move (two calls; by name, below
// descriptors: only root changes the host's "/", and no link at the end
// is followed), the directory read one getdents into a buffer on the
// stack: some 25 entries took 0.3 ms, where a bind by path with
// descriptors opened on both sides took twice that.
func rootOfItsOwn(old int, attrs uint64) error {
	if err := unix.Mount("tmpfs", newRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	nr, err := unix.Open(newRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(nr)
	dir, err := unix.Openat(old, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	done := &fdBatch{}
	defer done.flush()
	var buf [8192]byte
	for {
		n, err := unix.Getdents(dir, buf[:])
		if err != nil {
			return fmt.Errorf("read /: %w", err)
		}
		if n <= 0 {
			return nil
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return fmt.Errorf("read /: bad entry")
			}
			typ, name := b[18], b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if err := rootEntry(old, nr, string(name), typ, attrs, done); err != nil {
				return fmt.Errorf("/%s: %w", name, err)
			}
		}
	}
}

// rootEntry puts the host's top-level entry name (of dirent type typ) in
// the sandbox's root nr.
func rootEntry(old, nr int, name string, typ byte, attrs uint64, done *fdBatch) error {
	if name == "." || name == ".." {
		return nil
	}
	if typ == unix.DT_UNKNOWN {
		var st unix.Stat_t
		if err := unix.Fstatat(old, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			typ = unix.DT_DIR
		case unix.S_IFLNK:
			typ = unix.DT_LNK
		default:
			typ = unix.DT_REG
		}
	}
	switch {
	case name == "proc" || name == "dev":
		return unix.Mkdirat(nr, name, 0o755)
	case typ == unix.DT_LNK:
		target, err := readlinkat(old, name)
		if err != nil {
			return err
		}
		return unix.Symlinkat(target, nr, name)
	case typ == unix.DT_DIR:
		if err := unix.Mkdirat(nr, name, 0o755); err != nil {
			return err
		}
	default:
		fd, err := unix.Openat(nr, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		done.add(fd)
	}
	// No automount triggered, as the clone of the whole "/" triggered
	// none.
	tree, err := cloneTreeAt(old, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, attrs)
	if err != nil {
		return err
	}
	done.add(tree)
	return unix.MoveMount(tree, "", nr, name, unix.MOVE_MOUNT_F_EMPTY_PATH)
}

func readlinkat(dir int, name string) (string, error) {
	for n := 256; ; n *= 2 {
		b := make([]byte, n)
		k, err := unix.Readlinkat(dir, name, b)
		if err != nil {
			return "", err
		}
		if k < n {
			return string(b[:k]), nil
		}
	}
}
