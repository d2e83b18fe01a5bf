// Package schema carries the JSON Schema of the agentplay/v1 session map and
// a validator compiled from it.
//
// The published schema lets objects carry fields it does not name, because
// readers must ignore fields they do not know. The stricter checks a
// producer owes (no unknown fields, references in range, no leaked text)
// live in builder/validate.
package schema

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// AgentplayV1 is the JSON Schema (2020-12) of an agentplay/v1 map.
//
//go:embed agentplay-v1.schema.json
var AgentplayV1 []byte

// ID is the schema's $id.
const ID = "urn:agentplay:schema:agentplay-v1"

var compiled = sync.OnceValues(compile)

func compile() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(AgentplayV1))
	if err != nil {
		return nil, fmt.Errorf("decode agentplay/v1 schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// startedAt must really be a date-time, not merely a string.
	c.AssertFormat()
	if err := c.AddResource(ID, doc); err != nil {
		return nil, fmt.Errorf("load agentplay/v1 schema: %w", err)
	}
	sch, err := c.Compile(ID)
	if err != nil {
		return nil, fmt.Errorf("compile agentplay/v1 schema: %w", err)
	}
	return sch, nil
}

// Compiled returns the compiled schema, or the error that kept it from
// compiling.
func Compiled() (*jsonschema.Schema, error) { return compiled() }

// Validate checks a decoded JSON document (the output of encoding/json into
// an any, with or without UseNumber) against the schema. It returns nil, an
// *Error listing every violation, or an error if the schema does not compile.
func Validate(doc any) (err error) {
	sch, err := compiled()
	if err != nil {
		return err
	}
	// The library dereferences the result of big.Rat.SetString without a
	// check, so a number it cannot represent panics. Bad input must never
	// panic a caller.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("validate against agentplay/v1: a value the validator cannot represent")
		}
	}()
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		// Only the library's own failure modes land here (an unsupported
		// Go type in doc); their text names a type, never a value.
		return fmt.Errorf("validate against agentplay/v1: %w", err)
	}
	return &Error{Violations: violations(verr)}
}
