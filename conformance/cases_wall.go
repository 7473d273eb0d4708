package conformance

// wallCases: issue 39's edges of the landlock wall (the host's POSIX
// message queues, inode generations, other mount namespaces) and read
// leases on every backend, each judged by the host (docs/threat-model.md,
// "Walls").
func wallCases() []Case {
	return []Case{
		{Name: "wall-read-lease", Class: Kernel, Backends: linuxOnly,
			Summary: "fcntl(F_SETLEASE, F_RDLCK) on a workspace file the user owns, held while the host opens it for writing (O_NONBLOCK: a lease answers EWOULDBLOCK at once); the host's open succeeds, and an OFD lock and reading the file beside it work",
			Run:     readLease},
		{Name: "wall-inode-version", Class: Kernel, Backends: linuxOnly,
			Summary: "FS_IOC_SETVERSION and EXT4_IOC_SETVERSION on a read-only descriptor of a read-only file the user owns; the host's inode generation and ctime stay, and reading the file (and FS_IOC_GETVERSION) works",
			Run:     inodeVersionCase},
		{Name: "wall-mqueue", Class: Kernel, Backends: linuxOnly,
			Summary: "mq_unlink of a POSIX message queue the user keeps on the host, and mq_open(O_CREAT) of a new one; the host's queue stays and no queue appears on the host",
			Run:     mqueueCase},
		{Name: "wall-listmount", Class: Process, Backends: linuxOnly,
			Summary: "listmount and statmount, which name any mount namespace the user owns by its id (a concurrent native sandbox's binds); refused under landlock, confined to the sandbox's own user namespace elsewhere, and /proc/self/mountinfo still reads",
			Run:     listmountCase},
		{Name: "wall-meta-search", Class: Direct, Users: RootOnly, RootHarness: "the fixture is root's directory without search, which only a sandbox without capabilities is refused",
			Summary: "a root sandbox under a root launcher sets a user.* attribute on, and backdates, a file inside a directory of root's with mode 0600 (open mode: the model lets it change any file), which the kernel would not let a root without capabilities reach (no search); the host's file keeps both, and the same on a file of its own works",
			Run:     metaSearch},
		{Name: "wall-utf8-twins", Class: DoS, Backends: linuxOnly,
			Summary: "a sandbox makes, at a repository workspace's top, a directory and a file named with an invalid UTF-8 byte (b\\xff) beside their U+FFFD twins (b\\xef\\xbf\\xbd); the next launches start, and each name written there lands in its own directory on the host",
			Run:     utf8Twins},
	}
}
