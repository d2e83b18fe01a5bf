package schema

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Violation is one way a document breaks the schema.
//
// Message never quotes a value from the document: a map that breaks the
// schema may be one that leaks text, and the message must not pass it on.
type Violation struct {
	Path    string // JSON pointer into the document
	Keyword string // the schema keyword that failed (type, enum, pattern, …)
	Message string
}

// Error lists the violations of one document, in document order.
type Error struct {
	Violations []Violation
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("agentplay/v1 schema: ")
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteString("; ")
		}
		path := v.Path
		if path == "" {
			path = "/"
		}
		b.WriteString(path)
		b.WriteString(": ")
		b.WriteString(v.Message)
	}
	return b.String()
}

// violations flattens the library's tree of errors into its leaves, which
// name the keyword that actually failed.
func violations(root *jsonschema.ValidationError) []Violation {
	var out []Violation
	seen := map[Violation]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		v := Violation{
			Path:    Pointer(e.InstanceLocation),
			Keyword: keyword(e.ErrorKind),
			Message: message(e.ErrorKind),
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	walk(root)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Pointer renders a JSON pointer. A token that does not look like a field
// name or an index (a key of a free-form object) is replaced by its length,
// since a key can carry text as well as a value can.
func Pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		if !SafeToken(t) {
			fmt.Fprintf(&b, "<key of %d bytes>", len(t))
			continue
		}
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// SafeToken reports whether a key is shaped like a field name (letters and
// underscores, at most a short number at the end, as in llmLatencyP95) or
// an array index, and so may be printed. Anything else, a key with a dash,
// a dot or a run of digits inside, may be a token or a path.
func SafeToken(t string) bool {
	if t == "" || len(t) > 32 {
		return false
	}
	if strings.Trim(t, "0123456789") == "" {
		return len(t) <= 9 // an index
	}
	body := strings.TrimRight(t, "0123456789")
	if len(t)-len(body) > 3 {
		return false
	}
	for _, r := range body {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_') {
			return false
		}
	}
	return true
}

func keyword(k jsonschema.ErrorKind) string {
	p := k.KeywordPath()
	if len(p) == 0 {
		return "schema"
	}
	return p[len(p)-1]
}

// message describes a failure in words of the schema only. The library's
// own strings quote the offending value for pattern, format, enum and const
// failures, so those are rewritten here.
func message(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("is %s, want %s", k.Got, strings.Join(k.Want, " or "))
	case *kind.Enum:
		return fmt.Sprintf("is %s, not one of the allowed values%s", shape(k.Got), allowed(k.Want))
	case *kind.Const:
		return fmt.Sprintf("is %s, want %s", shape(k.Got), literal(k.Want))
	case *kind.Pattern:
		return fmt.Sprintf("string of %d bytes does not match %s", len(k.Got), k.Want)
	case *kind.Format:
		return fmt.Sprintf("%s is not a valid %s", shape(k.Got), k.Want)
	case *kind.Required:
		return "missing " + strings.Join(quoteAll(k.Missing), ", ")
	case *kind.MinLength:
		return fmt.Sprintf("string of %d characters is shorter than %d", k.Got, k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("string of %d characters is longer than %d", k.Got, k.Want)
	case *kind.PropertyNames:
		return fmt.Sprintf("key of %d bytes is not an allowed name", len(k.Property))
	case *kind.AdditionalProperties:
		return fmt.Sprintf("%d fields not allowed", len(k.Properties))
	case *kind.Minimum:
		return fmt.Sprintf("is %s, below the minimum %s", rat(k.Got), rat(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("is %s, above the maximum %s", rat(k.Got), rat(k.Want))
	case *kind.MinItems:
		return fmt.Sprintf("has %d items, want at least %d", k.Got, k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("has %d items, want at most %d", k.Got, k.Want)
	case *kind.FalseSchema:
		return "not allowed"
	}
	return "fails " + keyword(k)
}

// shape describes a value without printing it, unless it is a number, a
// boolean or null.
func shape(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case string:
		return fmt.Sprintf("a string of %d bytes", len(v))
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	if s := fmt.Sprint(v); len(s) <= 24 {
		return s
	}
	return "a number"
}

// literal prints a value that comes from the schema itself.
func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(3)
}

func literal(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	}
	return fmt.Sprint(v)
}

func allowed(want []any) string {
	if len(want) > 8 {
		return fmt.Sprintf(" (%d values)", len(want))
	}
	parts := make([]string, len(want))
	for i, w := range want {
		parts[i] = literal(w)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}
