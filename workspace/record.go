package workspace

import (
	"strconv"
	"strings"
)

// The scan's and the git guard's records (scancache.go, guardcache.go)
// are written as NUL-terminated fields after a header line: no path holds
// a NUL, and JSON took milliseconds to decode on every launch.

// recordWriter appends fields to a record.
type recordWriter struct{ b []byte }

func newRecord(header string) *recordWriter {
	return &recordWriter{b: append([]byte(header), '\n')}
}

func (w *recordWriter) str(s string) { w.b = append(append(w.b, s...), 0) }
func (w *recordWriter) int(n int64)  { w.b = append(strconv.AppendInt(w.b, n, 10), 0) }
func (w *recordWriter) uint(n uint64) {
	w.b = append(strconv.AppendUint(w.b, n, 10), 0)
}

func (w *recordWriter) bool(v bool) {
	if v {
		w.int(1)
	} else {
		w.int(0)
	}
}

func (w *recordWriter) stamp(s stamp) {
	w.uint(s.Ino)
	w.int(s.Ctime)
}

// recordReader reads a record's fields back; any field that is missing or
// out of range makes it bad, and a bad record is no record.
type recordReader struct {
	body string
	bad  bool
}

// readRecord checks the header line; nil for another one.
func readRecord(b []byte, header string) *recordReader {
	head, body, found := strings.Cut(string(b), "\n")
	if !found || head != header {
		return nil
	}
	return &recordReader{body: body}
}

func (r *recordReader) str() string {
	f, rest, found := strings.Cut(r.body, "\x00")
	if !found {
		r.bad = true
	}
	r.body = rest
	return f
}

// int reads a number from 0 to max.
func (r *recordReader) int(max int64) int64 {
	n, err := strconv.ParseInt(r.str(), 10, 64)
	if err != nil || n < 0 || n > max {
		r.bad = true
	}
	return n
}

func (r *recordReader) uint() uint64 {
	n, err := strconv.ParseUint(r.str(), 10, 64)
	if err != nil {
		r.bad = true
	}
	return n
}

func (r *recordReader) bool() bool { return r.int(1) == 1 }

func (r *recordReader) stamp() stamp {
	return stamp{Ino: r.uint(), Ctime: r.int(1<<63 - 1)}
}

// count reads how many entries follow: no more than the rest could hold,
// at least two bytes each.
func (r *recordReader) count() int64 { return r.int(int64(len(r.body) / 2)) }

// done reports whether the whole record was read, and well.
func (r *recordReader) done() bool { return !r.bad && r.body == "" }
