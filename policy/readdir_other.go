//go:build !linux

package policy

import "os"

func readDir(dir string, _ []byte) ([]dirent, error) {
	ents, err := os.ReadDir(dir)
	out := make([]dirent, 0, len(ents))
	for _, e := range ents {
		out = append(out, dirent{name: e.Name(), typ: e.Type()})
	}
	return out, err
}
