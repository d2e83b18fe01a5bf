package daemon

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// copyTree copies a directory tree of regular files.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scanRig is a temporary HOME holding the corpus logs of up to 200 KB,
// each written up to the end of the line that holds 1/part of its length,
// and the binary to scan it.
type scanRig struct {
	bin, home string
	feeds     []*feed
	paths     []string
}

func newScanRig(t *testing.T, part int) *scanRig {
	t.Helper()
	corpus := corpusDir(t)
	r := &scanRig{bin: buildBinary(t), home: t.TempDir()}
	r.feeds = layout(t, corpus, r.home, 200<<10)
	for _, f := range r.feeds {
		n := len(f.data)
		if part > 1 {
			n = len(f.data) / part
			if i := bytes.IndexByte(f.data[n:], '\n'); i >= 0 {
				n += i + 1
			}
		}
		f.write(t, n)
		r.paths = append(r.paths, f.to)
	}
	return r
}

func (r *scanRig) scan(data string) (string, error) {
	cmd := exec.Command(r.bin, "scan", "--data-dir", data)
	cmd.Env = testEnv(r.home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestRandomStateCorruption damages copies of a real state database (built
// by the daemon from half of every corpus log) at random offsets where it
// holds data (bbolt grows the file by 16 MiB, most of it never written):
// cuts, single-byte flips and short runs of garbage. On each copy the daemon
// catches up on the complete logs; it must not panic, must exit 0, and must
// end with the maps `agentmap build` makes of the complete logs. Any one
// trial that does not is a failure. Trials: AGENTMAP_CORRUPT_TRIALS
// (default 200); AGENTMAP_CORRUPT_KEEP=DIR keeps each failed trial's
// files there.
func TestRandomStateCorruption(t *testing.T) {
	sr := newScanRig(t, 2)
	bin, feeds, scan := sr.bin, sr.feeds, sr.scan
	base := filepath.Join(t.TempDir(), "base")
	if out, err := scan(base); err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	for _, f := range feeds {
		f.write(t, len(f.data))
	}
	want := expected(t, bin, sr.paths)
	trials := 200
	if v, err := strconv.Atoi(os.Getenv("AGENTMAP_CORRUPT_TRIALS")); err == nil && v > 0 {
		trials = v
	}
	corruptionTrials(t, sr, base, want, trials, true)
}

// TestQuietLoadOfADamagedState is TestRandomStateCorruption over a data
// directory that caught up on the complete logs already: the scan on each
// damaged copy finds nothing new, so it lets go of every session it may
// as it loads the records the repair left, and must still end with the
// maps of `agentmap build`.
func TestQuietLoadOfADamagedState(t *testing.T) {
	sr := newScanRig(t, 1)
	base := filepath.Join(t.TempDir(), "base")
	if out, err := sr.scan(base); err != nil {
		t.Fatalf("scan: %v\n%s", err, out)
	}
	corruptionTrials(t, sr, base, expected(t, sr.bin, sr.paths), 60, true)
}

// corruptionTrials scans damaged copies of base's state database (a cut,
// a flipped byte or seven bytes of garbage, by turns) and fails a trial
// that panics, exits with an error or ends with maps other than want.
// With written, the damage falls where the file holds data (up to its last
// byte that is not zero): most of a small database is pages never used.
func corruptionTrials(t *testing.T, sr *scanRig, base string, want map[string][]byte, trials int, written bool) {
	t.Helper()
	scan := sr.scan
	clean, err := os.ReadFile(StatePath(base))
	if err != nil {
		t.Fatal(err)
	}
	span := len(clean)
	if written {
		span = len(bytes.TrimRight(clean, "\x00"))
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("AGENTMAP_CORRUPT_SEED"), 10, 64); err == nil {
		seed = v // a failed run's, to replay it
	}
	t.Logf("%d logs, state.db of %d bytes (damaged within the first %d), %d maps expected, seed %d",
		len(sr.feeds), len(clean), span, len(want), seed)

	type outcome struct{ aside, repaired, untouched int }
	var mu sync.Mutex
	var got outcome
	var failures []string
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				rng := rand.New(rand.NewPCG(seed, uint64(i)))
				raw := append([]byte(nil), clean...)
				var how string
				switch i % 3 {
				case 0:
					n := rng.IntN(span)
					raw, how = raw[:n], fmt.Sprintf("cut to %d", n)
				case 1:
					off := rng.IntN(span)
					raw[off] ^= byte(1 + rng.IntN(255))
					how = fmt.Sprintf("byte %d flipped", off)
				default:
					off := rng.IntN(span - 7)
					for j := range 7 {
						raw[off+j] = byte(rng.IntN(256))
					}
					how = fmt.Sprintf("7 bytes at %d overwritten", off)
				}
				data := filepath.Join(t.TempDir(), "data")
				copyTree(t, base, data)
				if err := os.WriteFile(StatePath(data), raw, 0o600); err != nil {
					t.Error(err)
					continue
				}
				out, err := scan(data)
				var problem string
				switch {
				case strings.Contains(out, "goroutine "):
					problem = "panic"
				case err != nil:
					problem = "exit " + err.Error()
				default:
					if diff := diffMaps(readMaps(t, MapsDir(data)), want); len(diff) > 0 {
						problem = fmt.Sprintf("maps differ from build: %v", diff)
					}
				}
				mu.Lock()
				switch {
				case problem != "":
					if keep := os.Getenv("AGENTMAP_CORRUPT_KEEP"); keep != "" {
						// The damaged file beside the clean one, to replay.
						dst := filepath.Join(keep, strconv.Itoa(i))
						copyTree(t, base, filepath.Join(dst, "base"))
						os.WriteFile(filepath.Join(dst, "damaged.db"), raw, 0o600)
						os.WriteFile(filepath.Join(dst, "output.txt"), []byte(out), 0o600)
					}
					failures = append(failures, fmt.Sprintf("trial %d (%s): %s\n%s", i, how, problem, tailOf(out, 1500)))
				case strings.Contains(out, "moved it aside"):
					got.aside++
				case strings.Contains(out, "damaged"):
					got.repaired++
				default:
					got.untouched++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range trials {
		work <- i
	}
	close(work)
	wg.Wait()
	t.Logf("%d trials: %d moved aside and rebuilt, %d repaired record by record, %d with no damage that mattered, %d failed",
		trials, got.aside, got.repaired, got.untouched, len(failures))
	for _, f := range failures {
		t.Error("FAILED TRIAL:", f)
	}
}
