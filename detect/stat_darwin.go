package detect

import "syscall"

func ctimeNano(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
