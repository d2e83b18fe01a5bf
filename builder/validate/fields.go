package validate

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/agentmap/agentmap/builder/schema"
)

// known is the set of field names the schema defines for each object, read
// from the schema itself so that the strict check and the published schema
// never drift apart.
type known struct {
	top, session, totals, bySource, repo, file, agent, task, pr, vcs set
	targetFile, targetOutside                                        set
	eventCommon                                                      set
	eventKind                                                        map[string]set // common fields included
	errClasses                                                       set            // keys of totals.errorsByClass
}

type set map[string]bool

var fieldsOnce = sync.OnceValues(loadFields)

// fields returns the field sets, or an error if the embedded schema does
// not have the shape this package reads.
func fields() (*known, error) { return fieldsOnce() }

type node struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Defs       map[string]json.RawMessage `json:"$defs"`
	AllOf      []json.RawMessage          `json:"allOf"`
	If         json.RawMessage            `json:"if"`
	Then       json.RawMessage            `json:"then"`
	Else       json.RawMessage            `json:"else"`
	Const      *string                    `json:"const"`
	Enum       []any                      `json:"enum"`
}

func parse(raw json.RawMessage) (*node, error) {
	var n node
	if len(raw) == 0 {
		return &n, nil
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

func keys(n *node) set {
	s := set{}
	for k := range n.Properties {
		s[k] = true
	}
	return s
}

func loadFields() (*known, error) {
	root, err := parse(schema.AgentplayV1)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	def := func(name string) (*node, error) {
		raw, ok := root.Defs[name]
		if !ok {
			return nil, fmt.Errorf("schema has no $defs/%s", name)
		}
		return parse(raw)
	}
	k := &known{top: keys(root), eventKind: map[string]set{}, errClasses: set{}}
	for name, dst := range map[string]*set{
		"session": &k.session, "totals": &k.totals, "repo": &k.repo, "file": &k.file,
		"agent": &k.agent, "task": &k.task, "pr": &k.pr, "vcs": &k.vcs,
	} {
		n, err := def(name)
		if err != nil {
			return nil, err
		}
		*dst = keys(n)
	}
	totals, _ := def("totals")
	bySource, err := parse(totals.Properties["errorsBySource"])
	if err != nil {
		return nil, err
	}
	k.bySource = keys(bySource)

	target, err := def("target")
	if err != nil {
		return nil, err
	}
	then, err := parse(target.Then)
	if err != nil {
		return nil, err
	}
	els, err := parse(target.Else)
	if err != nil {
		return nil, err
	}
	k.targetOutside, k.targetFile = keys(then), keys(els)

	event, err := def("event")
	if err != nil {
		return nil, err
	}
	k.eventCommon = keys(event)
	kindNode, err := parse(event.Properties["kind"])
	if err != nil {
		return nil, err
	}
	for _, v := range kindNode.Enum {
		s := set{}
		for f := range k.eventCommon {
			s[f] = true
		}
		k.eventKind[fmt.Sprint(v)] = s
	}
	for _, name := range []string{"toolErrClass", "errorEventClass"} {
		n, err := def(name)
		if err != nil {
			return nil, err
		}
		for _, v := range n.Enum {
			k.errClasses[fmt.Sprint(v)] = true
		}
	}
	all := set{}
	for kind := range k.eventKind {
		all[kind] = true
	}
	if err := k.collect(event, all, true); err != nil {
		return nil, err
	}
	if len(k.eventKind) == 0 || len(k.errClasses) == 0 {
		return nil, fmt.Errorf("schema defines no event kinds or error classes")
	}
	return k, nil
}

// collect adds the properties a schema node defines to the kinds it
// applies to, narrowing the kinds through if/then/else on kind. The event
// node's own properties are the common ones, already in every set.
func (k *known) collect(n *node, kinds set, root bool) error {
	if !root {
		for f := range n.Properties {
			for kind := range kinds {
				k.eventKind[kind][f] = true
			}
		}
	}
	if len(n.If) > 0 {
		cond, err := parse(n.If)
		if err != nil {
			return err
		}
		kn, err := parse(cond.Properties["kind"])
		if err != nil {
			return err
		}
		match := set{}
		if kn.Const != nil {
			match[*kn.Const] = true
		}
		for _, v := range kn.Enum {
			match[fmt.Sprint(v)] = true
		}
		if len(match) == 0 {
			return fmt.Errorf("schema condition not on kind")
		}
		in, out := set{}, set{}
		for kind := range kinds {
			if match[kind] {
				in[kind] = true
			} else {
				out[kind] = true
			}
		}
		for kind := range match {
			if k.eventKind[kind] == nil {
				return fmt.Errorf("schema rule for unknown kind %s", kind)
			}
		}
		for _, branch := range []struct {
			raw   json.RawMessage
			kinds set
		}{{n.Then, in}, {n.Else, out}} {
			if len(branch.raw) == 0 {
				continue
			}
			b, err := parse(branch.raw)
			if err != nil {
				return err
			}
			if err := k.collect(b, branch.kinds, false); err != nil {
				return err
			}
		}
	}
	for _, raw := range n.AllOf {
		sub, err := parse(raw)
		if err != nil {
			return err
		}
		if err := k.collect(sub, kinds, false); err != nil {
			return err
		}
	}
	return nil
}

// sortedKeys gives a stable order for reporting.
func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unknownFields reports every field the schema does not name. The
// published schema lets readers skip such fields; a producer must not write
// them, since an extra field is where text would be smuggled.
func (c *checker) unknownFields(top map[string]any) {
	k, err := fields()
	if err != nil {
		c.add("", RuleUnknownField, "field list unavailable: %v", err)
		return
	}
	c.only("", top, k.top)
	c.only(ptr("session"), object(top["session"]), k.session)
	totals := object(top["totals"])
	c.only(ptr("totals"), totals, k.totals)
	c.only(ptr("totals", "errorsBySource"), object(totals["errorsBySource"]), k.bySource)
	byClass := object(totals["errorsByClass"])
	for _, key := range sortedKeys(byClass) {
		if !k.errClasses[key] {
			c.unknown(ptr("totals", "errorsByClass"), key, "is not an errClass")
		}
	}
	for _, sec := range []struct {
		name string
		set  set
	}{{"repos", k.repo}, {"files", k.file}, {"agents", k.agent}, {"tasks", k.task}, {"prs", k.pr}} {
		for i, v := range array(top[sec.name]) {
			c.only(ptr(sec.name, i), object(v), sec.set)
		}
	}
	for i, v := range c.events {
		ev := object(v)
		kind, _ := str(ev["kind"])
		allowed := k.eventKind[kind]
		if allowed == nil {
			allowed = k.eventCommon
		}
		c.only(ptr("events", i), ev, allowed)
		for j, t := range array(ev["targets"]) {
			tg := object(t)
			if _, outside := tg["scope"]; outside {
				c.only(ptr("events", i, "targets", j), tg, k.targetOutside)
			} else {
				c.only(ptr("events", i, "targets", j), tg, k.targetFile)
			}
		}
		if vcs := object(ev["vcs"]); vcs != nil {
			c.only(ptr("events", i, "vcs"), vcs, k.vcs)
		}
	}
}

func (c *checker) only(path string, obj map[string]any, allowed set) {
	for _, key := range sortedKeys(obj) {
		if !allowed[key] {
			c.unknown(path, key, "is not a field of this object")
		}
	}
}

// unknown reports a key. A key shaped like a field name is printed; any
// other key could be text and is described by its length.
func (c *checker) unknown(path, key, why string) {
	if schema.SafeToken(key) {
		c.add(path, RuleUnknownField, "%q %s", key, why)
		return
	}
	c.add(path, RuleUnknownField, "a key of %d bytes %s", len(key), why)
}
