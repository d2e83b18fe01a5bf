// Package exportcheck verifies exports the way the tools that read them
// would: each against its published JSON Schema, its tool's own rules
// (AttemptDB conformance, AgentScope validate, the Sentience stream
// rules), the agentplay/v1 validator for the maps bundles and JSON lines
// carry, and agentmap's own leak rules (no home or absolute path, and no
// string the caller names as forbidden).
package exportcheck

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Published schema files, as stored beside the corpus.
const (
	AttemptDBSchema  = "attemptdb-event-v1.schema.json"
	AgentScopeSchema = "agentscope-trace-1.0.0.schema.json"
	SentienceSchema  = "sentience-trace-v1.schema.json"
)

// Schemas are the compiled published schemas. Sentience also has each of
// its data branches compiled alone: an event must satisfy the branch of
// its own type (docs/exports.md).
type Schemas struct {
	AttemptDB  *jsonschema.Schema
	AgentScope *jsonschema.Schema
	Sentience  *jsonschema.Schema
	// SentienceBranch maps an event type to its data branch.
	SentienceBranch map[string]*jsonschema.Schema
}

// sentienceBranches is the index, in the schema's data.oneOf, of the
// branch each type written by agentmap must satisfy. action has no branch
// of its own and takes the free-form first one.
var sentienceBranches = map[string]int{
	"run_start": 0, "action": 0, "step_start": 1, "llm_called": 3,
	"verification": 5, "run_end": 7, "error": 8,
}

// LoadSchemas compiles the schemas in dir; os.ErrNotExist (wrapped) when
// the folder is absent, so tests can skip.
func LoadSchemas(dir string) (*Schemas, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s := &Schemas{SentienceBranch: map[string]*jsonschema.Schema{}}
	ids := map[string]string{}
	for _, name := range []string{AttemptDBSchema, AgentScopeSchema, SentienceSchema} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", name, err)
		}
		id := "file:///schemas/" + name
		if err := c.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("load %s: %w", name, err)
		}
		ids[name] = id
	}
	var err error
	if s.AttemptDB, err = c.Compile(ids[AttemptDBSchema]); err != nil {
		return nil, err
	}
	if s.AgentScope, err = c.Compile(ids[AgentScopeSchema]); err != nil {
		return nil, err
	}
	if s.Sentience, err = c.Compile(ids[SentienceSchema]); err != nil {
		return nil, err
	}
	for typ, i := range sentienceBranches {
		sch, err := c.Compile(ids[SentienceSchema] + "#/properties/data/oneOf/" + strconv.Itoa(i))
		if err != nil {
			return nil, fmt.Errorf("compile sentience branch %d: %w", i, err)
		}
		s.SentienceBranch[typ] = sch
	}
	return s, nil
}
