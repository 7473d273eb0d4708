package conformance

import "os"

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func removeAll(p string) { os.RemoveAll(p) }

func restore(a, b string) { os.RemoveAll(b); os.Rename(a, b) }
