package builder

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

func TestPythonFloat(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {0.1, "0.1"}, {1.5, "1.5"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {0.000015, "1.5e-05"}, {1e-7, "1e-07"},
		{123456.789, "123456.789"}, {1e15, "1000000000000000.0"}, {1e16, "1e+16"},
		{1.5e16, "1.5e+16"}, {1e100, "1e+100"}, {-2.5e-10, "-2.5e-10"}, {0.8999999999999999, "0.8999999999999999"}, {0.30000000000000004, "0.30000000000000004"},
		{5e-324, "5e-324"}, {math.MaxFloat64, "1.7976931348623157e+308"}, {12.000001, "12.000001"},
	}
	for _, tt := range tests {
		if got := pythonFloat(tt.f); got != tt.want {
			t.Errorf("pythonFloat(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

func TestCanonicalStrings(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\s/", `"q\"b\\s/"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"\x00\x1f\x7f", `"\u0000\u001f` + "\x7f" + `"`},
		{"é\u2028\u2029<>&", "\"é\u2028\u2029<>&\""},
		{"bad\xffutf8", "\"bad\uFFFDutf8\""},
		{"😀", "\"😀\""},
	}
	for _, tt := range tests {
		got, err := CanonicalJSON(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("CanonicalJSON(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// Strings are read eight bytes at a time up to the first that needs care:
// each such byte or rune is escaped as it is alone (read byte by byte),
// wherever it stands in strings about that long.
func TestCanonicalStringsAnyPlace(t *testing.T) {
	for _, odd := range []string{"\"", "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "😀", "<", "~", " "} {
		alone := string(appendString(nil, odd))
		alone = alone[1 : len(alone)-1]
		for n := range 20 {
			for at := 0; at <= n; at++ {
				a, b := strings.Repeat("a", at), strings.Repeat("b", n-at)
				want := `"` + a + alone + b + `"`
				if got := string(appendString(nil, a+odd+b)); got != want {
					t.Fatalf("%q: got %s, want %s", a+odd+b, got, want)
				}
			}
		}
	}
}

func TestCanonicalNumbers(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{json.Number("12"), "12"}, {json.Number("-0"), "0"}, {json.Number("2.0"), "2.0"},
		{json.Number("1E5"), "100000.0"}, {json.Number("0.000015"), "1.5e-05"},
		{json.Number("123456789012345678901234567890"), "123456789012345678901234567890"},
		{float64(3), "3"}, {float64(0.5), "0.5"}, {float64(1e16), "1e+16"}, {int64(-7), "-7"},
	}
	for _, tt := range tests {
		got, err := CanonicalJSON(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("CanonicalJSON(%#v) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	if _, err := CanonicalJSON(math.NaN()); err == nil {
		t.Error("NaN encoded")
	}
}

func TestCanonicalSortsKeysByCodePoint(t *testing.T) {
	got, _ := CanonicalJSON(map[string]any{"b": 1, "a": []any{true, nil}, "B": "x", "é": 2, "aa": map[string]any{"z": 1, "y": 2}})
	want := `{"B":"x","a":[true,null],"aa":{"y":2,"z":1},"b":1,"é":2}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestCanonicalMatchesPython compares bytes with python3's json.dumps over
// random documents and over built maps.
func TestCanonicalMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var docs []any
	for range 200 {
		docs = append(docs, randomValue(rng, 0))
	}
	for _, evs := range fixtureStreams(t) {
		docs = append(docs, mustBuild(t, evs, Options{Producer: "agentmap test"}))
	}
	var input bytes.Buffer
	var want [][]byte
	for _, d := range docs {
		canon, err := CanonicalJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, canon)
		// Python reads what we wrote and writes it again: a canonical
		// form must be a fixed point of that.
		input.Write(canon)
		input.WriteByte('\n')
	}
	script := `import sys, json
for line in sys.stdin.buffer.read().decode("utf-8").split("\n")[:-1]:
    sys.stdout.buffer.write(json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n")
`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = &input
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	if len(lines) != len(want) {
		t.Fatalf("python returned %d documents, want %d", len(lines), len(want))
	}
	for i := range want {
		if !bytes.Equal(lines[i], want[i]) {
			t.Errorf("document %d differs:\n go %s\n py %s", i, want[i], lines[i])
		}
	}
}

// randomValue makes a JSON value with awkward strings, floats and keys.
func randomValue(rng *rand.Rand, depth int) any {
	n := rng.IntN(9)
	if depth > 3 {
		n = rng.IntN(5)
	}
	switch n {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return rng.Int64N(1<<53) - 1<<52
	case 3:
		return randomFloat(rng)
	case 4:
		return randomString(rng)
	case 5, 6:
		a := make([]any, rng.IntN(5))
		for i := range a {
			a[i] = randomValue(rng, depth+1)
		}
		return a
	default:
		m := map[string]any{}
		for range rng.IntN(6) {
			m[randomString(rng)] = randomValue(rng, depth+1)
		}
		return m
	}
}

func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(4) {
	case 0:
		return math.Round(rng.Float64()*1e6) / 1e6
	case 1:
		return rng.Float64() * math.Pow(10, float64(rng.IntN(40)-20))
	case 2:
		return -rng.Float64() * math.Pow(10, float64(rng.IntN(600)-300))
	default:
		return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(0x7fe)+1)<<52)
	}
}

func randomString(rng *rand.Rand) string {
	pieces := []string{"a", "Z", "é", "\u2028", "\u2029", "\x00", "\x1f", "\x7f", "\"", "\\", "/", "\n", "\t",
		"😀", "中", "\ufeff", "<", "&", " ", "\u00a0", "\U0010FFFF"}
	var b strings.Builder
	for range rng.IntN(8) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// TestSplicedHashMatchesContentHash: the spliced encoding of Canonical
// gives the bytes and the hash that the plain definitions give.
func TestSplicedHashMatchesContentHash(t *testing.T) {
	for name, evs := range fixtureStreams(t) {
		m := mustBuild(t, evs, Options{Producer: "agentmap 1.2.3"})
		canon := canonical(t, m)
		dec := json.NewDecoder(bytes.NewReader(canon))
		dec.UseNumber()
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		plain, err := CanonicalJSON(doc)
		if err != nil || !bytes.Equal(plain, canon) {
			t.Errorf("%s: canonical bytes are not a fixed point", name)
		}
		h, err := ContentHash(doc)
		if err != nil || h != doc["contentHash"] || h != m.ContentHash {
			t.Errorf("%s: hash %s, stored %v", name, h, doc["contentHash"])
		}
		// The producer's version does not change the hash.
		m2 := mustBuild(t, evs, Options{Producer: "other 9"})
		if m2.ContentHash != m.ContentHash {
			t.Errorf("%s: cliVersion changes the hash", name)
		}
	}
}

func TestGzipIsDeterministic(t *testing.T) {
	evs := fixtureStreams(t)["claude_session"]
	a, err := mustBuild(t, evs, Options{}).Gzip()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mustBuild(t, evs, Options{}).Gzip()
	if !bytes.Equal(a, b) {
		t.Fatal("two gzips differ")
	}
	// No name, no modification time: header bytes 4..9 are zero mtime and
	// flags without FNAME.
	if a[3]&0x08 != 0 || a[4]|a[5]|a[6]|a[7] != 0 {
		t.Errorf("gzip header carries a name or a time: % x", a[:10])
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Equal(plain, canonical(t, mustBuild(t, evs, Options{}))) {
		t.Error("gzip does not hold the canonical JSON")
	}
}
