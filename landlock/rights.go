package landlock

// Landlock's access rights (linux/landlock.h), kept here so that the
// rendering is a pure function, testable on any OS.
const (
	Execute    uint64 = 1 << 0
	WriteFile  uint64 = 1 << 1
	ReadFile   uint64 = 1 << 2
	ReadDir    uint64 = 1 << 3
	RemoveDir  uint64 = 1 << 4
	RemoveFile uint64 = 1 << 5
	MakeChar   uint64 = 1 << 6
	MakeDir    uint64 = 1 << 7
	MakeReg    uint64 = 1 << 8
	MakeSock   uint64 = 1 << 9
	MakeFifo   uint64 = 1 << 10
	MakeBlock  uint64 = 1 << 11
	MakeSym    uint64 = 1 << 12
	Refer      uint64 = 1 << 13 // ABI 2
	Truncate   uint64 = 1 << 14 // ABI 3
	IoctlDev   uint64 = 1 << 15 // ABI 5
	// ResolveUnix is LANDLOCK_ACCESS_FS_RESOLVE_UNIX (an ABI newer than
	// 7): connect and sendmsg to a pathname Unix socket only beneath a
	// rule that grants it, or to one made in the same domain. Probed
	// (ResolveUnixError), never granted by a rule.
	ResolveUnix uint64 = 1 << 16

	// Network rights (ABI 4).
	BindTCP    uint64 = 1 << 0
	ConnectTCP uint64 = 1 << 1

	// Scopes (ABI 6).
	ScopeAbstractUnix uint64 = 1 << 0
	ScopeSignal       uint64 = 1 << 1
)

// FileRights are the rights a rule whose object is a file (not a
// directory) may hold.
const FileRights = Execute | ReadFile | WriteFile | Truncate | IoctlDev

// Rule grants Access beneath Path (on Path itself when it is a file).
type Rule struct {
	Path   string `json:"path"`
	Access uint64 `json:"access"`
	// Dir is whether Path was a directory when the plan was made; the
	// init refuses to apply a rule whose object changed kind.
	Dir bool `json:"dir"`
	// Dev and Ino are the identity of the object at Path when the plan
	// was made (both 0 when unknown: a directory the launch makes): the
	// init refuses to apply a rule to another object found there, one
	// renamed or swapped in since.
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

// Difference is a place where the backend is stricter than the policy's
// model, and why (cordon profile and cordon explain show them).
type Difference struct {
	Path string `json:"path"`
	Why  string `json:"why"`
	// Below is whether it concerns what lies beneath Path rather than
	// Path itself.
	Below bool `json:"below,omitempty"`
}

// Plan is the Landlock domain for one launch.
type Plan struct {
	ABI        int    `json:"abi"`
	HandledFS  uint64 `json:"handledFS"`
	HandledNet uint64 `json:"handledNet,omitempty"`
	Scoped     uint64 `json:"scoped,omitempty"`
	Rules      []Rule `json:"rules"`
	// Frozen are the directories in which nothing can be made or
	// removed, each an ancestor of a place the model narrows.
	Frozen []string `json:"frozen,omitempty"`
	// Unlistable are the directories that cannot be listed, each an
	// ancestor of a place the model denies.
	Unlistable []string `json:"unlistable,omitempty"`
	// Bounded are the split directories not rendered entry by entry
	// (too many entries, or not listable): beneath each, off the way to
	// the roots below it, only what its whole subtree may do is granted.
	Bounded  []string     `json:"bounded,omitempty"`
	Stricter []Difference `json:"stricter,omitempty"`
	// Extras are the rules granted beyond the policy (device files,
	// /proc), each with why.
	Extras []Difference `json:"extras,omitempty"`
	// models are the rights the model gives the objects whose rules
	// give less or that have none: the split directories and the links
	// in them. For the metadata gate, in the launcher; never sent to the
	// init.
	models map[string]uint64
}
