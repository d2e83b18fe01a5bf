package config

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// typeAt walks the Config type along a key; ok is false when the key names
// nothing in it.
func typeAt(key []string) (reflect.Type, bool) {
	t := reflect.TypeFor[Config]()
	for _, part := range key {
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return nil, false
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
		default:
			return nil, false
		}
	}
	return t, true
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			// Embedded structs share their keys, as the TOML library does.
			if inner, ok := fieldByTag(f.Type, tag); ok {
				return inner, true
			}
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name == tag && name != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// keysOf lists the keys of a table type, embedded structs included.
func keysOf(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			keys = append(keys, keysOf(f.Type)...)
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// unknownMsg says a key is unknown and, when its table is known, which keys
// that table has, so that a typo is obvious.
func unknownMsg(k toml.Key) string {
	// The first part of the key that names nothing is what is wrong: in
	// agents.aider.enabled, it is the table agents.aider.
	n := len(k) - 1
	for i := 1; i < len(k); i++ {
		if _, ok := typeAt(k[:i]); !ok {
			n = i - 1
			break
		}
	}
	parent, ok := typeAt(k[:n])
	if !ok || parent.Kind() != reflect.Struct {
		return "unknown key"
	}
	what := "unknown key"
	if n < len(k)-1 {
		what = "unknown table [" + k[:n+1].String() + "]"
	}
	known := keysOf(parent)
	where := "at the top level"
	if n > 0 {
		where = "in [" + k[:n].String() + "]"
	}
	return what + " (known " + where + ": " + strings.Join(known, ", ") + ")"
}

// expected describes the value a key takes, for wrong-type messages.
func expected(key string) string {
	parts, _, ok := parseKey(key)
	if !ok {
		return ""
	}
	t, ok := typeAt(parts)
	if !ok {
		return ""
	}
	switch t {
	case reflect.TypeFor[Duration]():
		return `a duration string such as "15m"`
	case reflect.TypeFor[Size]():
		return `a size string such as "64MiB"`
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array of strings"
	case reflect.Struct, reflect.Map:
		return "a table"
	}
	return ""
}
