package builder

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// Maps built while the blocks of earlier builds are reused (Release, and
// the node blocks every Build hands back) are byte for byte those built
// from nothing: random sessions of every size, each built after sessions
// of other shapes, smaller and larger, whose buffers it takes.
func TestReleasedBuffersGiveTheSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var sessions [][]byte
	var inputs [][]int
	for i := 0; i < 60; i++ {
		n := []int{3, 40, 400, 3000, 6000}[i%5] + rng.IntN(50)
		inputs = append(inputs, []int{i, n})
	}
	fresh := func(seed, n int) []byte {
		evs := randomSession(rand.New(rand.NewPCG(uint64(seed), 1)), n)
		m, err := Build(evs, Options{})
		if err != nil {
			return nil
		}
		gz, err := m.Gzip()
		if err != nil {
			t.Fatal(err)
		}
		return gz
	}
	for _, in := range inputs {
		sessions = append(sessions, fresh(in[0], in[1]))
	}
	rng.Shuffle(len(inputs), func(i, j int) {
		inputs[i], inputs[j] = inputs[j], inputs[i]
		sessions[i], sessions[j] = sessions[j], sessions[i]
	})
	for k, in := range inputs {
		evs := randomSession(rand.New(rand.NewPCG(uint64(in[0]), 1)), in[1])
		m, err := Build(evs, Options{})
		if err != nil {
			if sessions[k] != nil {
				t.Fatalf("session %d: %v on a second build", in[0], err)
			}
			continue
		}
		gz, err := m.Gzip()
		if err != nil {
			t.Fatal(err)
		}
		m.Release()
		if !bytes.Equal(gz, sessions[k]) {
			t.Fatalf("session %d (%d records): the map differs when built over released buffers", in[0], in[1])
		}
	}
}
