package builder

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/redact"
)

// builderVersionFile records Version and a digest of what the builder's
// maps say: the golden maps built from fixed events (testdata/builder) and
// the content hashes of the corpus's maps (testdata/corpus), which the
// golden tests keep up to date.
var builderVersionFile = filepath.Join("..", "testdata", "builder-version.tsv")

// TestBuilderVersion fails when the maps the golden tests record change
// while Version stays: a daemon would then keep every map an earlier build
// wrote of a session that no longer changes (daemon/identity.go). Raise
// Version, then record it with -update (which refuses to record other maps
// under the same version). A parser's change that changes the corpus's
// maps raises it too: the maps of logs deleted since are written again
// from the events kept.
func TestBuilderVersion(t *testing.T) {
	goldens, _ := filepath.Glob(filepath.Join("..", "testdata", "builder", "*.map.json"))
	goldens = append(goldens, filepath.Join("..", "testdata", "corpus", "content-hashes.txt"))
	slices.Sort(goldens)
	h := sha256.New()
	for _, p := range goldens {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(p), len(b))
		h.Write(b)
	}
	digest := hex.EncodeToString(h.Sum(nil))
	now := fmt.Sprintf("%d\t%s", Version, digest)
	raw, err := os.ReadFile(builderVersionFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var was string
	for _, l := range strings.Split(string(raw), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			was = l
		}
	}
	wasVersion, wasDigest, _ := strings.Cut(was, "\t")
	switch {
	case wasVersion == strconv.Itoa(Version) && wasDigest != digest:
		t.Fatalf("the golden maps changed under builder version %d: raise Version in builder/identity.go, so that daemons write again the maps an earlier build wrote, then record it with -update", Version)
	case was != now && !*update:
		t.Fatalf("builder version %d and its maps are not recorded in %s: record them with -update", Version, builderVersionFile)
	case was != now:
		out := "# The builder's version and a digest of the golden maps (builder TestBuilderVersion; recorded with -update).\n" + now + "\n"
		if err := os.WriteFile(builderVersionFile, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The identity of a map's options changes with everything a map depends
// on besides its events, and with nothing else.
func TestOptionsIdentity(t *testing.T) {
	base := Options{PathMode: redact.ModeRelative, Producer: "agentmap 1"}
	same := []Options{
		{PathMode: redact.ModeRelative, Producer: "agentmap 2"},
		{PathMode: redact.ModeRelative, EventCap: DefaultEventCap},
		{PathMode: redact.ModeRelative, HashKey: []byte("unused outside hashed mode")},
	}
	for _, o := range same {
		if o.Identity() != base.Identity() {
			t.Errorf("%+v: another identity than %+v", o, base)
		}
	}
	other := []Options{
		{PathMode: redact.ModeDirsOnly},
		{PathMode: redact.ModeRelative, EventCap: 100},
		{PathMode: redact.ModeRelative, Prices: map[string]Price{"claude-opus": {Input: 1, Output: 2}}},
		{PathMode: redact.ModeHashed, HashKey: []byte("0123456789abcdef0123456789abcdef")},
		{PathMode: redact.ModeHashed, HashKey: []byte("fedcba9876543210fedcba9876543210")},
	}
	seen := map[string]bool{base.Identity(): true}
	for _, o := range other {
		id := o.Identity()
		if seen[id] {
			t.Errorf("%+v: the identity of another option set", o)
		}
		seen[id] = true
		if strings.Contains(id, "0123456789abcdef") {
			t.Errorf("the identity shows the hash key: %s", id)
		}
	}
}
