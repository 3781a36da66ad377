// Package splitread gives tests of stream readers the same input cut in the
// ways a network cuts it: whole, a byte at a time, 1 to 3 bytes at a time,
// and in two parts at every offset.
package splitread

import (
	"bytes"
	"io"
	"strconv"
	"testing/iotest"
)

// chunkReader returns its data 1, 2, 3, 1, 2, 3... bytes at a time.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.n = r.n%3 + 1
	k := copy(p[:min(r.n, len(p))], r.data)
	r.data = r.data[k:]
	return k, nil
}

// Readers returns, by name, functions that make readers of in: whole, one
// byte at a time and 1 to 3 bytes at a time; with everySplit, also in two
// parts split at every offset.
func Readers(in []byte, everySplit bool) map[string]func() io.Reader {
	rs := map[string]func() io.Reader{
		"whole":     func() io.Reader { return bytes.NewReader(in) },
		"one byte":  func() io.Reader { return iotest.OneByteReader(bytes.NewReader(in)) },
		"1-3 bytes": func() io.Reader { return &chunkReader{data: in} },
	}
	for i := 1; everySplit && i < len(in); i++ {
		rs["split at "+strconv.Itoa(i)] = func() io.Reader {
			return io.MultiReader(bytes.NewReader(in[:i]), bytes.NewReader(in[i:]))
		}
	}
	return rs
}
