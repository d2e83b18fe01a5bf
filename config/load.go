package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/agentmap/agentmap/internal/regular"
)

// maxFileSize bounds the config file read into memory: a config is a few
// kilobytes, anything much larger is not one.
const maxFileSize = 1 << 20

// file mirrors Config with every top-level key left undecoded, so that a
// wrong type in one section does not hide the problems of the others.
type file struct {
	Version toml.Primitive `toml:"version"`
	DataDir toml.Primitive `toml:"data_dir"`
	Maps    toml.Primitive `toml:"maps"`
	Flush   toml.Primitive `toml:"flush"`
	Watch   toml.Primitive `toml:"watch"`
	Agents  toml.Primitive `toml:"agents"`
	Privacy toml.Primitive `toml:"privacy"`
	Export  toml.Primitive `toml:"export"`
	Log     toml.Primitive `toml:"log"`
	Prices  toml.Primitive `toml:"prices"`
	Sink    toml.Primitive `toml:"sink"`
}

// Load reads the file at path over the defaults and validates the result. A
// missing file is not an error: the defaults are returned with File "". Any
// problem (syntax, unknown key, wrong type, invalid value) makes Load return
// nil and every problem found, joined, each naming the key and line.
func Load(path string) (*Config, error) {
	f, err := regular.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		c := Default()
		return c, nil
	}
	if kind := regular.KindOf(err); kind != "" {
		// A named pipe would be waited on (a daemon's reloads with it,
		// for good), a directory read as nothing.
		return nil, fmt.Errorf("config %s is not a regular file (a %s)", path, kind)
	}
	if err != nil {
		return nil, fmt.Errorf("open config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return nil, &Problem{File: path, Msg: fmt.Sprintf("larger than %s: not a config file", Size(maxFileSize))}
	}
	c, err := parse(path, string(data), currentPlatform())
	if err != nil {
		return nil, err
	}
	c.File = path
	return c, nil
}

// typeErr matches the TOML library's type mismatch message, which carries
// the key but is not a ParseError.
var (
	typeErr  = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "((?:[^"\\]|\\.)*)"\): incompatible types: TOML value has type ([^;]+);`)
	tableErr = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "((?:[^"\\]|\\.)*)"\): type mismatch for [^:]+: expected table but found (\w+)`)
)

// DataDirOf returns the data directory a config file names even when
// other settings in it have problems (err lists them): the operator
// commands (status, list, show) read what the running daemon wrote, which
// a typo elsewhere in the file, rejected at its reload, does not move. ok
// is false when the file cannot say: it cannot be read or parsed, or its
// data_dir is itself a problem.
func DataDirOf(path string) (dir string, ok bool, err error) {
	c, err := Load(path)
	if err == nil {
		return c.DataDir, true, nil
	}
	probs := Problems(err)
	if len(probs) == 0 || slices.ContainsFunc(probs, mayMoveDataDir) {
		return "", false, err
	}
	data, rerr := regular.ReadFile(path)
	if rerr != nil {
		return "", false, err
	}
	c, _ = parseWith(path, string(data), currentPlatform())
	if c == nil {
		return "", false, err
	}
	return c.DataDir, true, err
}

func parse(name, doc string, p platform) (*Config, error) {
	c, err := parseWith(name, doc, p)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// mayMoveDataDir reports whether a problem may hide the data directory the
// user meant: a syntax error, data_dir itself, an unknown key at the top
// (datadir = …, a table's name misspelled) or one named data_dir under a
// table (data_dir written below [maps]), or a version this build does not
// read.
func mayMoveDataDir(p *Problem) bool {
	return p.Key == "" || strings.HasPrefix(p.Msg, "syntax") || p.Key == "data_dir" || p.Key == "version" ||
		strings.HasSuffix(p.Key, ".data_dir") || !strings.Contains(p.Key, ".")
}

// parseWith decodes doc over the defaults; on problems it returns them
// with the config as decoded (a section that failed to decode keeps its
// defaults for the keys that did not decode), or nil on a syntax error.
func parseWith(name, doc string, p platform) (*Config, error) {
	c := defaultsFor(p)
	var raw file
	md, err := toml.Decode(doc, &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Problem{File: name, Line: pe.Position.Line, Key: pe.LastKey, Msg: "syntax: " + pe.Message}
		}
		return nil, &Problem{File: name, Msg: "syntax: not a TOML file"}
	}
	lines := scanKeyLines(doc)

	var probs []error
	failed := map[string]bool{}
	sections := []struct {
		key  string
		prim toml.Primitive
		dst  any
	}{
		{"version", raw.Version, &c.Version},
		{"data_dir", raw.DataDir, &c.DataDir},
		{"maps", raw.Maps, &c.Maps},
		{"flush", raw.Flush, &c.Flush},
		{"watch", raw.Watch, &c.Watch},
		{"agents", raw.Agents, &c.Agents},
		{"privacy", raw.Privacy, &c.Privacy},
		{"export", raw.Export, &c.Export},
		{"log", raw.Log, &c.Log},
		{"prices", raw.Prices, &c.Prices},
		{"sink", raw.Sink, &c.Sink},
	}
	for _, s := range sections {
		if !md.IsDefined(s.key) {
			continue
		}
		if err := md.PrimitiveDecode(s.prim, s.dst); err != nil {
			failed[s.key] = true
			first := decodeProblem(name, s.key, err, lines)
			probs = append(probs, first)
			// Then key by key, so that every other key of a wrong type is
			// named too, not the first alone.
			decodeKeys(md, s.prim, reflect.ValueOf(s.dst).Elem(), func(err error) {
				if p := decodeProblem(name, s.key, err, lines); p.Key != first.Key {
					probs = append(probs, p)
				}
			})
		}
	}
	// An unknown table comes with each of its keys: it is reported once,
	// at its header, as a table.
	undecoded := md.Undecoded()
	under := func(k, table toml.Key) bool {
		return len(k) > len(table) && slices.Equal(k[:len(table)], table)
	}
	for _, k := range undecoded {
		if failed[k[0]] || slices.ContainsFunc(undecoded, func(t toml.Key) bool { return under(k, t) }) {
			continue
		}
		msgKey := k
		if i := slices.IndexFunc(undecoded, func(c toml.Key) bool { return under(c, k) }); i >= 0 {
			msgKey = undecoded[i]
		}
		key := k.String()
		probs = append(probs, &Problem{File: name, Line: lines.line(key), Key: key, Msg: unknownMsg(msgKey)})
	}

	resolvePaths(c, p, md)
	if !failed["prices"] {
		for _, vp := range missingPriceKeys(c, md) {
			vp.File = name
			vp.Line = lines.line(vp.Key)
			probs = append(probs, vp)
		}
	}

	if err := c.validate(p); err != nil {
		for _, vp := range Problems(err) {
			top, _, _ := strings.Cut(vp.Key, ".")
			if failed[top] {
				continue // already reported as a wrong type
			}
			vp.File = name
			vp.Line = lines.line(vp.Key)
			probs = append(probs, vp)
		}
	}
	if len(probs) > 0 {
		// In file order, so that the report reads top to bottom.
		sort.SliceStable(probs, func(i, j int) bool {
			return probs[i].(*Problem).Line < probs[j].(*Problem).Line
		})
		return c, errors.Join(probs...)
	}
	return c, nil
}

// decodeKeys decodes a table that failed to decode whole into dst (a
// struct or a map of them) key by key, and reports the error of each key
// that does not decode, going down into the tables within. A value that
// is not a table at all is reported as it is.
func decodeKeys(md toml.MetaData, prim toml.Primitive, dst reflect.Value, report func(error)) {
	if err := md.PrimitiveDecode(prim, dst.Addr().Interface()); err == nil {
		return
	} else if k := dst.Kind(); k != reflect.Struct && k != reflect.Map {
		report(err)
		return
	}
	var keys map[string]toml.Primitive
	if err := md.PrimitiveDecode(prim, &keys); err != nil {
		report(err)
		return
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch dst.Kind() {
		case reflect.Struct:
			if f := fieldOf(dst, k); f.IsValid() {
				decodeKeys(md, keys[k], f, report)
			}
		case reflect.Map:
			if dst.IsNil() {
				dst.Set(reflect.MakeMap(dst.Type()))
			}
			elem := reflect.New(dst.Type().Elem()).Elem()
			if old := dst.MapIndex(reflect.ValueOf(k)); old.IsValid() {
				elem.Set(old)
			}
			decodeKeys(md, keys[k], elem, report)
			dst.SetMapIndex(reflect.ValueOf(k), elem)
		}
	}
}

// fieldOf is the field of struct v that the TOML key k decodes into.
func fieldOf(v reflect.Value, k string) reflect.Value {
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if !t.Field(i).IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = t.Field(i).Name
		}
		if name == k || strings.EqualFold(name, k) {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

func decodeProblem(name, section string, err error, lines keyLines) *Problem {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		key := pe.LastKey
		if key == "" {
			key = section
		}
		line := lines.line(key)
		if line == 0 {
			line = pe.Position.Line
		}
		return &Problem{File: name, Line: line, Key: key, Msg: pe.Message}
	}
	m := typeErr.FindStringSubmatch(err.Error())
	if m == nil {
		m = tableErr.FindStringSubmatch(err.Error())
	}
	if m != nil {
		key := m[2]
		if unq, uerr := strconv.Unquote(`"` + m[2] + `"`); uerr == nil {
			key = unq
		}
		line := lines.line(key)
		if line == 0 {
			line, _ = strconv.Atoi(m[1])
		}
		msg := "wrong type: the value is a TOML " + tomlType(m[3])
		if want := expected(key); want != "" {
			msg += ", expected " + want
		}
		return &Problem{File: name, Line: line, Key: key, Msg: msg}
	}
	return &Problem{File: name, Line: lines.line(section), Key: section, Msg: "cannot be decoded"}
}

// resolvePaths expands "~" in every path and lets the paths that live in the
// data directory follow a data_dir the file moved, unless the file sets them.
func resolvePaths(c *Config, p platform, md toml.MetaData) {
	c.DataDir = p.expand(c.DataDir)
	if md.IsDefined("data_dir") {
		if !md.IsDefined("maps", "hash_key_file") {
			c.Maps.HashKeyFile = p.join(c.DataDir, hashKeyName)
		}
		if !md.IsDefined("export", "dir") {
			c.Export.Dir = p.join(c.DataDir, exportDirName)
		}
	}
	c.Maps.HashKeyFile = p.expand(c.Maps.HashKeyFile)
	c.Export.Dir = p.expand(c.Export.Dir)
	for _, name := range AgentNames {
		a, _ := c.Agents.ByName(name)
		for i, r := range a.Roots {
			a.Roots[i] = p.expand(r)
		}
	}
	for i, r := range c.Agents.Cursor.AppRoots {
		c.Agents.Cursor.AppRoots[i] = p.expand(r)
	}
	resolveSinkPaths(c, p)
}

// tomlType names a TOML value type the way the TOML library's messages do
// for values, and the way a TOML user would for Go types it leaks.
func tomlType(t string) string {
	switch t {
	case "int64":
		return "integer"
	case "float64":
		return "float"
	case "bool":
		return "boolean"
	}
	return t
}

// priceRates are the keys every [prices] table must set, each with what
// to write. A rate the file leaves out would decode as 0 and price those
// tokens at $0 without a word; the built-in table has no missing rates (a
// provider that bills no cache writes is given its input price there), so
// neither may an override. Writing 0 remains possible, and then it was meant.
var priceRates = []struct{ key, msg string }{
	{"input", "must be set, or fresh input would cost $0 (write 0 if it is free)"},
	{"cache_write", "must be set, or cache writes would cost $0: give the provider's cache-write price " +
		"(its input price if it bills no cache writes, 0 if they are free)"},
	{"cache_read", "must be set, or cache reads would cost $0: give the provider's cache-read price " +
		"(its input price if it gives no cache discount, 0 if they are free)"},
	{"output", "must be set, or output would cost $0 (write 0 if it is free)"},
}

// missingPriceKeys names each rate of priceRates a [prices] table of the
// file does not set. It reads the file's keys, not the decoded values: 0
// written and 0 left out decode alike.
func missingPriceKeys(c *Config, md toml.MetaData) []*Problem {
	models := make([]string, 0, len(c.Prices))
	for m := range c.Prices {
		models = append(models, m)
	}
	sort.Strings(models)
	var out []*Problem
	for _, m := range models {
		if strings.TrimSpace(m) == "" {
			continue // validate reports the empty prefix
		}
		for _, r := range priceRates {
			if !md.IsDefined("prices", m, r.key) {
				out = append(out, &Problem{Key: toml.Key{"prices", m, r.key}.String(), Msg: r.msg})
			}
		}
	}
	return out
}
