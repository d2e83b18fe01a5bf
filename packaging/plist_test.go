package packaging

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// plistValue is a decoded property list value: string, int64, bool,
// []plistValue or map[string]plistValue.
type plistValue any

// parsePlist reads an XML property list strictly: one <plist version="1.0">
// holding one value; dicts alternate <key> and a value, keys unique.
func parsePlist(data []byte) (map[string]plistValue, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	root, err := nextStart(d)
	if err != nil {
		return nil, err
	}
	if root.Name.Local != "plist" {
		return nil, fmt.Errorf("root element is <%s>, not <plist>", root.Name.Local)
	}
	if v := attr(root, "version"); v != "1.0" {
		return nil, fmt.Errorf("plist version %q", v)
	}
	start, err := nextStart(d)
	if err != nil {
		return nil, err
	}
	v, err := parseValue(d, start)
	if err != nil {
		return nil, err
	}
	dict, ok := v.(map[string]plistValue)
	if !ok {
		return nil, fmt.Errorf("top-level value is not a dict")
	}
	if err := expectEnd(d, "plist"); err != nil {
		return nil, err
	}
	return dict, nil
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// nextStart skips whitespace, comments, the XML declaration and the
// doctype up to the next element.
func nextStart(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.EndElement:
			return xml.StartElement{}, fmt.Errorf("unexpected </%s>", t.Name.Local)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.StartElement{}, fmt.Errorf("stray text %q", t)
			}
		}
	}
}

// nextStartOrEnd is nextStart that also returns at the end of the
// enclosing element.
func nextStartOrEnd(d *xml.Decoder, parent string) (xml.StartElement, bool, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, false, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, false, nil
		case xml.EndElement:
			if t.Name.Local != parent {
				return xml.StartElement{}, false, fmt.Errorf("</%s> closes <%s>", t.Name.Local, parent)
			}
			return xml.StartElement{}, true, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.StartElement{}, false, fmt.Errorf("stray text %q in <%s>", t, parent)
			}
		}
	}
}

func expectEnd(d *xml.Decoder, name string) error {
	_, end, err := nextStartOrEnd(d, name)
	if err != nil {
		return err
	}
	if !end {
		return fmt.Errorf("<%s> holds more than one value", name)
	}
	return nil
}

func text(d *xml.Decoder, name string) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			return b.String(), nil
		default:
			return "", fmt.Errorf("<%s> holds markup", name)
		}
	}
}

func parseValue(d *xml.Decoder, e xml.StartElement) (plistValue, error) {
	switch e.Name.Local {
	case "string":
		return text(d, "string")
	case "integer":
		s, err := text(d, "integer")
		if err != nil {
			return nil, err
		}
		return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	case "true", "false":
		if s, err := text(d, e.Name.Local); err != nil || s != "" {
			return nil, fmt.Errorf("<%s/> is not empty", e.Name.Local)
		}
		return e.Name.Local == "true", nil
	case "array":
		var list []plistValue
		for {
			child, end, err := nextStartOrEnd(d, "array")
			if err != nil {
				return nil, err
			}
			if end {
				return list, nil
			}
			v, err := parseValue(d, child)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
	case "dict":
		dict := map[string]plistValue{}
		for {
			k, end, err := nextStartOrEnd(d, "dict")
			if err != nil {
				return nil, err
			}
			if end {
				return dict, nil
			}
			if k.Name.Local != "key" {
				return nil, fmt.Errorf("<%s> where a <key> belongs", k.Name.Local)
			}
			key, err := text(d, "key")
			if err != nil {
				return nil, err
			}
			if _, dup := dict[key]; dup {
				return nil, fmt.Errorf("key %q twice", key)
			}
			vs, end, err := nextStartOrEnd(d, "dict")
			if err != nil {
				return nil, err
			}
			if end {
				return nil, fmt.Errorf("key %q has no value", key)
			}
			if dict[key], err = parseValue(d, vs); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	return nil, fmt.Errorf("<%s> is not a property list type", e.Name.Local)
}

func TestPlistIsAPropertyList(t *testing.T) {
	s := darwinSpec()
	// Characters that XML must escape reach launchd intact.
	s.ConfigFile = "/Users/u/R&D <notes>/it's.toml"
	data, err := RenderPlist(s)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := parsePlist(data)
	if err != nil {
		t.Fatalf("not a property list: %v\n%s", err, data)
	}
	want := map[string]plistValue{
		"Label":                   LaunchdLabel,
		"ProgramArguments":        []plistValue{s.Binary, "run", "--config", s.ConfigFile, "--log-file", filepath.Join(s.DataDir, "logs", "agentmap.log")},
		"RunAtLoad":               true,
		"KeepAlive":               true,
		"ProcessType":             "Background",
		"LowPriorityIO":           true,
		"LowPriorityBackgroundIO": true,
		"Nice":                    int64(15),
		"Umask":                   int64(0o077),
		"ThrottleInterval":        int64(30),
		"ExitTimeOut":             int64(60),
		"WorkingDirectory":        s.DataDir,
		"StandardOutPath":         filepath.Join(s.DataDir, LaunchdLabel+".out.log"),
		"StandardErrorPath":       filepath.Join(s.DataDir, LaunchdLabel+".err.log"),
	}
	for k, v := range want {
		if got, ok := dict[k]; !ok || fmt.Sprint(got) != fmt.Sprint(v) || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", v) {
			t.Errorf("%s = %#v, want %#v", k, got, v)
		}
	}
	for k := range dict {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected key %s", k)
		}
	}
}

func TestPlistParserRejects(t *testing.T) {
	head := `<?xml version="1.0"?><plist version="1.0">`
	for _, bad := range []string{
		head + `<dict><key>A</key></dict></plist>`,
		head + `<dict><key>A</key><string>x</string><key>A</key><true/></dict></plist>`,
		head + `<dict><string>x</string></dict></plist>`,
		head + `<dict><key>A</key><integer>x</integer></dict></plist>`,
		head + `<dict><key>A</key><date>x</date></dict></plist>`,
		head + `<dict></dict><dict></dict></plist>`,
		head + `<array></array></plist>`,
		`<plist version="1.0"><dict><key>A</key><string>x</dict></plist>`,
	} {
		if _, err := parsePlist([]byte(bad)); err == nil || err == io.EOF {
			if err == nil {
				t.Errorf("accepted %s", bad)
			}
		}
	}
}
