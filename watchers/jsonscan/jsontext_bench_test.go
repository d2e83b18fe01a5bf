//go:build goexperiment.jsonv2

package jsonscan

import (
	"bytes"
	"encoding/json/jsontext"
	"testing"
)

// BenchmarkCorpusJSONTokenizer reads each line's top-level members with
// encoding/json/v2's jsontext decoder, which Go 1.26 has only behind
// GOEXPERIMENT=jsonv2: it is measured here against the walk, not used.
func BenchmarkCorpusJSONTokenizer(b *testing.B) {
	lines, size := corpusLines(b)
	b.SetBytes(size)
	n := 0
	r := bytes.NewReader(nil)
	dec := jsontext.NewDecoder(r)
	for b.Loop() {
		for _, l := range lines {
			r.Reset(l)
			dec.Reset(r)
			if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
				continue
			}
			for dec.PeekKind() != '}' {
				if _, err := dec.ReadToken(); err != nil {
					break
				}
				v, err := dec.ReadValue()
				if err != nil {
					break
				}
				n += len(v)
			}
		}
	}
}
