package exportcheck

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/agentmap/agentmap/builder/validate"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/agentscope"
	"github.com/agentmap/agentmap/export/attemptdb"
	"github.com/agentmap/agentmap/export/bundle"
	"github.com/agentmap/agentmap/export/sentience"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Check returns every problem of one export (ungzipped line formats, or a
// bundle as written). forbidden lists strings that must not appear
// anywhere in it (canaries). Problems name lines and rules, not content.
func (s *Schemas) Check(f export.Format, data []byte, forbidden []string) []string {
	var p []string
	for _, c := range forbidden {
		if c != "" && bytes.Contains(data, []byte(c)) {
			p = append(p, "a forbidden string appears in the export")
		}
	}
	switch f {
	case export.Bundle:
		p = append(p, checkBundle(data, forbidden)...)
	case export.JSONL:
		eachLine(data, func(n int, line []byte) {
			for _, v := range validate.Map(line) {
				p = append(p, fmt.Sprintf("line %d: map: %s", n, v))
			}
		})
	case export.AttemptDB:
		eachLine(data, func(n int, line []byte) {
			p = append(p, validateJSON(s.AttemptDB, line, fmt.Sprintf("line %d: schema", n))...)
			p = append(p, ownAttrs(line, fmt.Sprintf("line %d", n))...)
			p = append(p, leaks(line, fmt.Sprintf("line %d", n), true)...)
		})
		rep, err := attemptdb.Check(bytes.NewReader(data))
		if err != nil {
			p = append(p, err.Error())
		} else if !rep.Compatible() {
			p = append(p, "attemptdb conformance:\n"+rep.String())
		}
	case export.AgentScope:
		p = append(p, validateJSON(s.AgentScope, data, "schema")...)
		if _, err := agentscope.Validate(data); err != nil {
			p = append(p, "agentscope validate: "+err.Error())
		}
		p = append(p, leaks(data, "trace", false)...)
	case export.Sentience:
		eachLine(data, func(n int, line []byte) {
			where := fmt.Sprintf("line %d", n)
			p = append(p, validateJSON(s.Sentience, line, where+": schema")...)
			var ev struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			}
			if json.Unmarshal(line, &ev) != nil {
				return
			}
			branch := s.SentienceBranch[ev.Type]
			if branch == nil {
				p = append(p, where+": type agentmap does not write")
				return
			}
			p = append(p, validateJSON(branch, ev.Data, where+": own branch of "+ev.Type)...)
			p = append(p, leaks(line, where, false)...)
		})
		probs, err := sentience.Check(bytes.NewReader(data))
		if err != nil {
			p = append(p, err.Error())
		}
		p = append(p, probs...)
	}
	return p
}

func eachLine(data []byte, fn func(n int, line []byte)) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 512<<20)
	n := 0
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			fn(n, sc.Bytes())
		}
	}
}

func validateJSON(sch *jsonschema.Schema, data []byte, where string) []string {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []string{where + ": not JSON"}
	}
	if err := sch.Validate(doc); err != nil {
		return []string{fmt.Sprintf("%s: %v", where, err)}
	}
	return nil
}

func checkBundle(data []byte, forbidden []string) []string {
	var p []string
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return []string{"bundle: not gzip"}
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	var manifest *bundle.Manifest
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(p, "bundle: bad tar")
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return append(p, "bundle: bad tar entry")
		}
		if h.Name == bundle.ManifestName {
			manifest = &bundle.Manifest{}
			if json.Unmarshal(b, manifest) != nil {
				p = append(p, "bundle: manifest is not JSON")
			}
			continue
		}
		files[h.Name] = b
		for _, v := range validate.Map(b) {
			p = append(p, fmt.Sprintf("bundle %s: %s", h.Name, v))
		}
		if inflated, err := gunzip(b); err == nil {
			for _, c := range forbidden {
				if c != "" && bytes.Contains(inflated, []byte(c)) {
					p = append(p, "bundle "+h.Name+": a forbidden string appears")
				}
			}
		}
	}
	if manifest == nil {
		return append(p, "bundle: no manifest.json")
	}
	if len(manifest.Maps) != len(files) {
		p = append(p, fmt.Sprintf("bundle: manifest lists %d maps, archive holds %d", len(manifest.Maps), len(files)))
	}
	for _, e := range manifest.Maps {
		b, ok := files[e.File]
		if !ok {
			p = append(p, "bundle: manifest names a missing file")
			continue
		}
		inflated, err := gunzip(b)
		if err != nil {
			p = append(p, "bundle: map is not gzip")
			continue
		}
		var head struct {
			ContentHash string `json:"contentHash"`
			Session     struct {
				ID string `json:"id"`
			} `json:"session"`
		}
		if json.Unmarshal(inflated, &head) != nil || head.ContentHash != e.ContentHash || head.Session.ID != e.SessionID {
			p = append(p, "bundle: manifest entry disagrees with its map")
		}
	}
	return p
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// windowsAbs is a drive path anywhere in a string.
var windowsAbs = regexp.MustCompile(`(^|[^A-Za-z0-9])[A-Za-z]:[\\/]`)

// leaks finds absolute or home paths in any string of a JSON document. The
// one absolute-looking string a map may hold is the bucket label
// "/tmp (scratch)". With anyHome, a home-directory pattern anywhere in a
// string counts too (AttemptDB's rule, which also catches a repo-relative
// path through a directory named home or Users).
func leaks(data []byte, where string, anyHome bool) []string {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	var p []string
	walkStrings(v, func(s string) {
		switch {
		case anyHome && attemptdb.HasHomePath(s):
			p = append(p, where+": a home-directory path")
		case strings.HasPrefix(s, "/") && !validate.IsBucketLabel(s):
			p = append(p, where+": an absolute path")
		case windowsAbs.MatchString(s):
			p = append(p, where+": a drive path")
		case strings.HasPrefix(s, "~/") && !validate.IsBucketLabel(s):
			p = append(p, where+": a home-relative path")
		}
	})
	return p
}

func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range x {
			fn(k)
			walkStrings(e, fn)
		}
	}
}

// ownAttrs is agentmap's stricter attrs rule: an allowlisted key or one of
// its own x_agentmap_* extensions, never another provider's namespace.
func ownAttrs(line []byte, where string) []string {
	var ev struct {
		Attrs map[string]json.RawMessage `json:"attrs"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return nil
	}
	var p []string
	for k := range ev.Attrs {
		if strings.HasPrefix(k, "x_") && !strings.HasPrefix(k, "x_agentmap_") || !attemptdb.AttrKeyAllowed(k) {
			p = append(p, where+": attrs key outside the allowlist and x_agentmap_*")
		}
	}
	return p
}
