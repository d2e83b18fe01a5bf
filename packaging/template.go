package packaging

import (
	"fmt"
	"strings"
)

// This is the template syntax of github.com/kardianos/service, which
// renders custom service files with a small engine of its own that it does
// not export: {{Key}}, {{Key | fn | fn}}, {{if Key}}…{{else}}…{{end}},
// {{range Key}}…{{.}}…{{end}}. Values are strings or lists of strings. The
// same template rendered here and by kardianos gives the same bytes, which
// is what lets --dry-run show exactly what would be installed.

type node struct {
	kind  byte // 't' text, 'v' value, 'i' if, 'r' range
	text  string
	funcs []string
	body  []node
	alt   []node
}

func parseTemplate(src string) ([]node, error) {
	nodes, term, _, err := parseNodes(src)
	if err != nil {
		return nil, err
	}
	if term != "" {
		return nil, fmt.Errorf("template: unexpected {{%s}}", term)
	}
	return nodes, nil
}

// parseNodes parses until the end of src or an {{end}}/{{else}}, which it
// returns with the rest of the source.
func parseNodes(src string) (nodes []node, term, rest string, err error) {
	for {
		open := strings.Index(src, "{{")
		if open < 0 {
			if src != "" {
				nodes = append(nodes, node{kind: 't', text: src})
			}
			return nodes, "", "", nil
		}
		end := strings.Index(src[open:], "}}")
		if end < 0 {
			return nil, "", "", fmt.Errorf("template: unclosed {{")
		}
		if open > 0 {
			nodes = append(nodes, node{kind: 't', text: src[:open]})
		}
		action := strings.TrimSpace(src[open+2 : open+end])
		src = src[open+end+2:]
		word, arg, _ := strings.Cut(action, " ")
		arg = strings.TrimSpace(arg)
		switch word {
		case "end", "else":
			return nodes, word, src, nil
		case "if", "range":
			n := node{kind: 'i', text: arg}
			if word == "range" {
				n.kind = 'r'
			}
			var t string
			if n.body, t, src, err = parseNodes(src); err != nil {
				return nil, "", "", err
			}
			if t == "else" && n.kind == 'i' {
				if n.alt, t, src, err = parseNodes(src); err != nil {
					return nil, "", "", err
				}
			}
			if t != "end" {
				return nil, "", "", fmt.Errorf("template: {{%s %s}} without {{end}}", word, arg)
			}
			nodes = append(nodes, n)
		default:
			parts := strings.Split(action, "|")
			n := node{kind: 'v', text: strings.TrimSpace(parts[0])}
			for _, f := range parts[1:] {
				n.funcs = append(n.funcs, strings.TrimSpace(f))
			}
			nodes = append(nodes, n)
		}
	}
}

type templateFunc func(string) string

func execute(b *strings.Builder, nodes []node, data map[string]any, dot string, funcs map[string]templateFunc) error {
	lookup := func(key string) (any, error) {
		if key == "." {
			return dot, nil
		}
		v, ok := data[key]
		if !ok {
			return nil, fmt.Errorf("template: unknown key %q", key)
		}
		return v, nil
	}
	for _, n := range nodes {
		switch n.kind {
		case 't':
			b.WriteString(n.text)
		case 'v':
			v, err := lookup(n.text)
			if err != nil {
				return err
			}
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("template: %q is not a string", n.text)
			}
			for _, name := range n.funcs {
				f, ok := funcs[name]
				if !ok {
					return fmt.Errorf("template: unknown function %q", name)
				}
				s = f(s)
			}
			b.WriteString(s)
		case 'i':
			v, err := lookup(n.text)
			if err != nil {
				return err
			}
			branch := n.alt
			if s, ok := v.(string); ok && s != "" {
				branch = n.body
			} else if l, ok := v.([]string); ok && len(l) > 0 {
				branch = n.body
			}
			if err := execute(b, branch, data, dot, funcs); err != nil {
				return err
			}
		case 'r':
			v, err := lookup(n.text)
			if err != nil {
				return err
			}
			list, ok := v.([]string)
			if !ok {
				return fmt.Errorf("template: %q is not a list", n.text)
			}
			for _, item := range list {
				if err := execute(b, n.body, data, item, funcs); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func render(src string, data map[string]any, funcs map[string]templateFunc) ([]byte, error) {
	nodes, err := parseTemplate(src)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := execute(&b, nodes, data, "", funcs); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// The functions kardianos offers to each kind of template.
var (
	systemdFuncs = map[string]templateFunc{
		"cmd":       func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` },
		"cmdEscape": func(s string) string { return strings.ReplaceAll(s, " ", `\x20`) },
	}
	launchdFuncs = map[string]templateFunc{
		"html": strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;").Replace,
	}
)
