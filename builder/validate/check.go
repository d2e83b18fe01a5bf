package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/schema"
)

// checker collects problems and the indexes the cross-reference checks
// need.
type checker struct {
	problems []Problem

	top     map[string]any
	events  []any
	agents  map[string]bool
	tasks   map[int64]bool
	files   map[int64]bool
	repos   map[string]bool
	hasTask bool
}

func (c *checker) add(path, rule, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// strict runs every check beyond the schema, in a fixed order so that the
// output is stable.
func (c *checker) strict(top map[string]any) {
	c.top = top
	c.index(top)
	c.unknownFields(top)
	c.strings(top)
	c.sequence()
	c.references(top)
	c.verbs()
	c.paths(top)
	c.names(top)
	c.totals(top)
	c.contentHash(top)
}

// ptr builds a JSON pointer from field names and indexes.
func ptr(parts ...any) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteByte('/')
		switch p := p.(type) {
		case int:
			b.WriteString(strconv.Itoa(p))
		case string:
			b.WriteString(schema.Pointer([]string{p})[1:])
		default:
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}

func object(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func array(v any) []any {
	a, _ := v.([]any)
	return a
}

func str(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// integer reads a JSON integer (1 and 1.0 alike, as the schema does).
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, false
		}
		return int64(f), true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func boolean(v any) bool {
	b, _ := v.(bool)
	return b
}

// describe gives the shape of a string that may be text: its length and
// word count, never its content.
func describe(s string) string {
	chars, words := len([]rune(s)), len(strings.Fields(s))
	return fmt.Sprintf("a string of %d %s and %d %s", chars, plural(chars, "character"), words, plural(words, "word"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// index records the ids that events and other sections refer to, and the
// duplicates among them.
func (c *checker) index(top map[string]any) {
	c.events = array(top["events"])
	c.agents = map[string]bool{"main": true}
	seenAgent := map[string]bool{}
	c.tasks = map[int64]bool{}
	c.files = map[int64]bool{}
	c.repos = map[string]bool{}
	for i, a := range array(top["agents"]) {
		id, ok := str(object(a)["id"])
		if !ok {
			continue
		}
		if seenAgent[id] {
			c.add(ptr("agents", i, "id"), RuleDuplicateID, "agent id used twice")
		}
		seenAgent[id] = true
		c.agents[id] = true
	}
	if ts, ok := top["tasks"]; ok && ts != nil {
		c.hasTask = true
		for i, t := range array(ts) {
			n, ok := integer(object(t)["n"])
			if !ok {
				continue
			}
			if c.tasks[n] {
				c.add(ptr("tasks", i, "n"), RuleDuplicateID, "task number %d used twice", n)
			}
			c.tasks[n] = true
		}
	}
	for i, f := range array(top["files"]) {
		id, ok := integer(object(f)["id"])
		if !ok {
			continue
		}
		if c.files[id] {
			c.add(ptr("files", i, "id"), RuleDuplicateID, "file id %d used twice", id)
		}
		c.files[id] = true
	}
	for i, r := range array(top["repos"]) {
		id, ok := str(object(r)["id"])
		if !ok {
			continue
		}
		if c.repos[id] {
			c.add(ptr("repos", i, "id"), RuleDuplicateID, "repo id used twice")
		}
		c.repos[id] = true
	}
}

// eventKind returns events[i].kind, or "".
func (c *checker) eventKind(i int) string {
	if i < 0 || i >= len(c.events) {
		return ""
	}
	k, _ := str(object(c.events[i])["kind"])
	return k
}
