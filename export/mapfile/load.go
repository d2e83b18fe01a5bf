package mapfile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/state/mapstore"

	"github.com/agentmap/agentmap/internal/regular"
)

// MaxMapBytes bounds an inflated map. A map holds at most 20,000 events of a
// few hundred bytes each, so anything far beyond that is not a map (or is a
// gzip bomb) and is refused instead of filling memory.
const MaxMapBytes = 256 << 20

// Doc is one loaded map: its decoded view, its canonical JSON and the
// generic tree the canonical bytes were written from (kept for
// re-rendering).
type Doc struct {
	// Name is the file name the map is exported under: <native id>.json.gz.
	Name      string
	Map       *Map
	Canonical []byte
	tree      map[string]any
}

// ErrNotMap means the input decodes as JSON but is not an agentplay/v1 map.
var ErrNotMap = errors.New("not an agentplay/v1 session map")

// ReadFile loads a map file (.json.gz or plain .json) of a store: a named
// pipe or a device put in its place is an error, not a wait.
func ReadFile(path string) (*Doc, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Read loads one map from r, gzipped or not. Errors say what is wrong, never
// what the input holds.
func Read(r io.Reader) (*Doc, error) {
	br := bufio.NewReader(r)
	var src io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read map: bad gzip header")
		}
		defer zr.Close()
		src = zr
	}
	raw, err := io.ReadAll(io.LimitReader(src, MaxMapBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read map: %w", err)
	}
	if len(raw) > MaxMapBytes {
		return nil, fmt.Errorf("read map: larger than %d bytes inflated", MaxMapBytes)
	}
	return Parse(raw)
}

// Parse decodes the JSON of one map.
func Parse(raw []byte) (*Doc, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		return nil, jsonError("read map", err)
	}
	return fromTree(tree)
}

func fromTree(tree map[string]any) (*Doc, error) {
	schema, _ := tree["schema"].(string)
	if schema != "agentplay/v1" && schema != "entelligence.session-map/v1" {
		return nil, ErrNotMap
	}
	canon, err := builder.CanonicalJSON(tree)
	if err != nil {
		return nil, fmt.Errorf("read map: %w", err)
	}
	m, ok := DecodeJSON(canon)
	if !ok {
		m = new(Map)
		if err := json.Unmarshal(canon, m); err != nil {
			return nil, jsonError("read map", err)
		}
	}
	if m.Session.ID == "" {
		return nil, fmt.Errorf("read map: %w: no session.id", ErrNotMap)
	}
	return &Doc{Name: FileName(m.Session.NativeID()), Map: m, Canonical: canon, tree: tree}, nil
}

// jsonError keeps the position of a JSON error and drops the quoted input
// some encoding/json errors carry.
func jsonError(what string, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("%s: invalid JSON at offset %d", what, syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("%s: field %s has the wrong type (offset %d)", what, typ.Field, typ.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: truncated JSON", what)
	}
	return fmt.Errorf("%s: invalid JSON", what)
}

// FileName is the store's file name for a native id (mapstore.FileName:
// reversible, safe on every OS).
func FileName(native string) string { return mapstore.FileName(native) }

// Start is the session's start time; ok is false when the map has none.
func (m *Map) Start() (time.Time, bool) {
	if m.Session.StartedAt == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, m.Session.StartedAt)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// FilePath is the rendered path of file id.
func (m *Map) FilePath(id int) (string, bool) {
	if id >= 0 && id < len(m.Files) && m.Files[id].ID == id {
		return m.Files[id].Path, true
	}
	for _, f := range m.Files {
		if f.ID == id {
			return f.Path, true
		}
	}
	return "", false
}

// UnpricedModels names the models that served requests with tokens and
// cost nothing in the map: no request of theirs carries a cost, and the
// embedded table has no price for them, or has one that would put a cost
// on those tokens (the map was written before it had; a model the config
// priced has costs in the map, bar a request too small to round to a
// cent's ten-thousandth). lane "" means the whole session, else one agents[] id.
// Whatever shows a cost shows "unpriced" for them, never $0.
func (m *Map) UnpricedModels(lane string) []string {
	var out, costed []string
	for _, e := range m.Events {
		if e.Kind != "llm" || (lane != "" && e.Agent != lane) {
			continue
		}
		if e.Cost > 0 {
			if !slices.Contains(costed, e.Model) {
				costed = append(costed, e.Model)
			}
			continue
		}
		if e.In+e.CW+e.CR+e.Out == 0 || slices.Contains(out, e.Model) {
			continue
		}
		// No price now, or one that puts a thousandth of a cent or more on
		// these tokens (a lower bound: the map keeps neither the cache
		// writes' lifetime nor fast mode): the map was written when its
		// model had none, in an older table. Only a request too small to
		// round to a cost is priced at 0, and the margin keeps the
		// rounding's edge out of it.
		if p, ok := prices.Lookup(e.Model); !ok || p.Cost(prices.Usage{In: e.In, CW5m: e.CW, CR: e.CR, Out: e.Out}) >= 1e-5 {
			out = append(out, e.Model)
		}
	}
	return slices.DeleteFunc(out, func(model string) bool { return slices.Contains(costed, model) })
}
