package validate

import (
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/schema"
)

// Problem is one failed check.
type Problem struct {
	Path    string // JSON pointer of the offending value ("" for the document)
	Rule    string // one of the Rule constants
	Message string
}

// String renders the problem as "events[12].verb: message (rule)".
func (p Problem) String() string {
	return fmt.Sprintf("%s: %s (%s)", Dotted(p.Path), p.Message, p.Rule)
}

// Rules, one per kind of check.
const (
	RuleJSON         = "json"          // not JSON, not one object, bad gzip
	RuleSchema       = "schema"        // the published JSON Schema
	RuleUnknownField = "unknown-field" // a field the schema does not name
	RuleSeq          = "seq"           // events[i].seq == i
	RuleTime         = "time"          // t >= 0 and non-decreasing
	RuleDuplicateID  = "duplicate-id"  // ids of repos, files, agents, tasks
	RuleAgentRef     = "agent-ref"     // agent, parent, child
	RuleTaskRef      = "task-ref"      // events[].task
	RuleFileRef      = "file-ref"      // targets[].file
	RuleRepoRef      = "repo-ref"      // files[].repo, commit repo
	RuleSeqRef       = "seq-ref"       // launchSeq, ref, retryOf, first, startSeq, endSeq, prs[].seq
	RuleVerb         = "verb"          // program plus subcommand only
	RuleIdentifier   = "identifier"    // names that must not be sentences
	RuleAbsolutePath = "absolute-path" // absolute or home paths anywhere
	RuleStringLength = "string-length" // long strings are text
	RuleRelativePath = "relative-path" // files[].path is repo-relative
	RuleDirsOnly     = "dirs-only"     // dirs_only file names
	RuleHashed       = "hashed"        // hashed path segments
	RuleRemote       = "remote"        // owner/name
	RuleHost         = "host"          // host names
	RuleURL          = "url"           // http(s) URLs without credentials
	RuleTotals       = "totals"        // totals agree with events
	RuleContentHash  = "content-hash"  // contentHash recomputed
)

const gzipID1, gzipID2 = 0x1f, 0x8b

// maxDecompressed bounds a gzipped map once inflated: a map at the event
// cap is a few MB, so far more than that is a bomb. A variable for tests.
var maxDecompressed int64 = 64 << 20

// Map checks one map, given as JSON or as gzip of JSON (detected by its
// magic bytes). It returns no problems for a valid map.
func Map(data []byte) []Problem {
	doc, p := decode(data)
	if p != nil {
		return []Problem{*p}
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return []Problem{{Rule: RuleJSON, Message: "the map is not a JSON object"}}
	}
	if p := hugeNumber(doc, nil); p != nil {
		return []Problem{*p}
	}
	var c checker
	c.schema(doc)
	c.strict(top)
	sortProblems(c.problems)
	return c.problems
}

// sortProblems orders problems by path, indexes by number, keeping the
// order of the checks for one path.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int { return comparePaths(a.Path, b.Path) })
}

func comparePaths(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] == bs[i] {
			continue
		}
		x, errA := strconv.Atoi(as[i])
		y, errB := strconv.Atoi(bs[i])
		if errA == nil && errB == nil {
			return cmp.Compare(x, y)
		}
		return strings.Compare(as[i], bs[i])
	}
	return cmp.Compare(len(as), len(bs))
}

func decode(data []byte) (any, *Problem) {
	var r io.Reader = bytes.NewReader(data)
	if len(data) >= 2 && data[0] == gzipID1 && data[1] == gzipID2 {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, &Problem{Rule: RuleJSON, Message: "bad gzip header"}
		}
		defer zr.Close()
		r = &limitReader{r: zr, n: maxDecompressed}
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, &Problem{Rule: RuleJSON, Message: describeDecodeError(err, dec.InputOffset())}
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, &Problem{Rule: RuleJSON, Message: fmt.Sprintf("data after the map at offset %d", dec.InputOffset())}
		}
		return nil, &Problem{Rule: RuleJSON, Message: describeDecodeError(err, dec.InputOffset())}
	}
	return doc, nil
}

// describeDecodeError names the failure and its offset. encoding/json's own
// messages quote the offending character or value, so they are not used.
func describeDecodeError(err error, off int64) string {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at offset %d", syn.Offset)
	case errors.Is(err, errTooLarge):
		return fmt.Sprintf("more than %d bytes once decompressed", maxDecompressed)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the JSON ends early at offset %d", off)
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		return "corrupt gzip stream"
	}
	var corrupt flate.CorruptInputError
	if errors.As(err, &corrupt) {
		return "corrupt gzip stream"
	}
	return fmt.Sprintf("unreadable JSON at offset %d", off)
}

var errTooLarge = errors.New("too large")

type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// maxNumberToken bounds a number's text: no counter or time needs more,
// and the schema library turns numbers into exact rationals, which for an
// exponent in the millions takes minutes.
const (
	maxNumberToken = 40
	maxExponent    = 308
)

// hugeNumber finds the first number too large to check, or returns nil.
func hugeNumber(v any, path []any) *Problem {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if p := hugeNumber(v[k], append(path, k)); p != nil {
				return p
			}
		}
	case []any:
		for i, e := range v {
			if p := hugeNumber(e, append(path, i)); p != nil {
				return p
			}
		}
	case json.Number:
		tok := string(v)
		exp := 0
		if i := strings.IndexAny(tok, "eE"); i >= 0 {
			exp, _ = strconv.Atoi(strings.TrimPrefix(tok[i+1:], "+"))
		}
		if len(tok) > maxNumberToken || exp > maxExponent || exp < -maxExponent-20 {
			return &Problem{Path: ptr(path...), Rule: RuleJSON, Message: fmt.Sprintf("a number of %d characters is out of range", len(tok))}
		}
	}
	return nil
}

// Dotted turns a JSON pointer into the "events[12].verb" form people read.
func Dotted(ptr string) string {
	if ptr == "" {
		return "(map)"
	}
	var b strings.Builder
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// schema runs the published JSON Schema.
func (c *checker) schema(doc any) {
	err := schema.Validate(doc)
	if err == nil {
		return
	}
	var serr *schema.Error
	if !errors.As(err, &serr) {
		c.add("", RuleSchema, "the schema could not be applied")
		return
	}
	for _, v := range serr.Violations {
		c.add(v.Path, RuleSchema, "%s: %s", v.Keyword, v.Message)
	}
}
