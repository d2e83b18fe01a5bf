package schema

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The format page, read in place from the shared folder next to the
// repository when it is there.
const formatPage = "../../../shared/seeds/000_ecf1f18a1efd0a83.txt"

// pageTable returns the first column of each row of the table that
// follows the line start, up to the line stop. A first column may list
// several names ("filesTouched, filesCreated, filesDeleted distinct files").
func pageTable(t *testing.T, lines []string, start, stop string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, l := range lines {
		switch {
		case !in && l == start:
			in = true
			continue
		case in && l == stop:
			return rows
		case !in || l == "" || strings.HasPrefix(l, "field ") || strings.HasPrefix(l, "These "):
			continue
		}
		var names []string
		for _, w := range strings.Fields(l) {
			names = append(names, strings.TrimSuffix(w, ","))
			if !strings.HasSuffix(w, ",") {
				break
			}
		}
		rows = append(rows, names)
	}
	t.Fatalf("no table between %q and %q", start, stop)
	return nil
}

func readPage(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.FromSlash(formatPage))
	if err != nil {
		t.Skipf("format page not available: %v", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	return lines
}

type props struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Defs       map[string]props           `json:"$defs"`
}

// TestSchemaCoversFormatPage checks that every field the format page's
// tables name is a property of the schema, so the two cannot drift apart
// silently.
func TestSchemaCoversFormatPage(t *testing.T) {
	lines := readPage(t)
	var root props
	if err := json.Unmarshal(AgentplayV1, &root); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		def, start, stop string
	}{
		{"session", "session", "totals"},
		{"totals", "totals", "repos, files"},
		{"event", "Every event has these fields:", "kind extra fields"},
	} {
		have := root.Defs[tc.def].Properties
		rows := pageTable(t, lines, tc.start, tc.stop)
		if len(rows) < 8 {
			t.Fatalf("%s: only %d rows read from the page", tc.def, len(rows))
		}
		for _, row := range rows {
			for _, name := range row {
				if _, ok := have[name]; !ok {
					t.Errorf("%s: the page names %q, the schema does not", tc.def, name)
				}
			}
		}
	}
}

// TestSchemaCoversEventKinds checks the kind table of the format page: every
// kind is in the schema's enum and every extra field it lists is defined
// somewhere in the event definition.
func TestSchemaCoversEventKinds(t *testing.T) {
	lines := readPage(t)
	event := string(mustDef(t, "event"))
	var kindProp struct {
		Enum []string `json:"enum"`
	}
	var ev props
	if err := json.Unmarshal(mustDef(t, "event"), &ev); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ev.Properties["kind"], &kindProp); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, k := range kindProp.Enum {
		kinds[k] = true
	}
	paren := regexp.MustCompile(`\([^)]*\)`)
	in, rows := false, 0
	for _, l := range lines {
		if l == "kind extra fields" {
			in = true
			continue
		}
		if !in {
			continue
		}
		if strings.HasPrefix(l, "verify is") {
			break
		}
		if l == "" {
			continue
		}
		rows++
		l = paren.ReplaceAllString(l, "")
		words := strings.Fields(l)
		i := 0
		for ; i < len(words); i++ {
			k := strings.TrimSuffix(words[i], ",")
			if !kinds[k] {
				t.Errorf("the page's kind %q is not in the schema", k)
			}
			if !strings.HasSuffix(words[i], ",") {
				i++
				break
			}
		}
		for _, item := range strings.Split(strings.Join(words[i:], " "), ",") {
			f := strings.Fields(item)
			if len(f) == 0 {
				continue
			}
			name := strings.Trim(f[0], "?:[]")
			if !strings.Contains(event, `"`+name+`"`) {
				t.Errorf("the page's field %q (%s) is not in the event definition", name, l[:min(len(l), 30)])
			}
		}
	}
	if rows != 17 {
		t.Errorf("read %d rows of the kind table, want 17", rows)
	}
}

func mustDef(t *testing.T, name string) json.RawMessage {
	t.Helper()
	var root struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(AgentplayV1, &root); err != nil {
		t.Fatal(err)
	}
	d, ok := root.Defs[name]
	if !ok {
		t.Fatalf("no $defs/%s", name)
	}
	return d
}
