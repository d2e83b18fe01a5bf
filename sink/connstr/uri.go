package connstr

import (
	"errors"
	"strconv"
	"strings"
)

// uri is a connection URI as libpq's parser reads it, and pgx's copy of it
// (pgconn/parse_url.go in pgx v5): the user information ends at the first
// @ before any / (user up to its first :, the password after it); hosts and
// ports are comma-separated lists up to the first / or ?; the path up to
// the first ? is the database; the query is &-separated key=value pairs,
// each with exactly one =, the last of a key winning. Every part is
// percent-decoded, leading and trailing spaces dropped, spaces inside
// refused.
type uri struct {
	params []param // user, password, host, port, dbname as the URI's body gives them
	query  []param // the query's, keys decoded
}

func (u *uri) all() []param { return append(append([]param(nil), u.params...), u.query...) }

func (u *uri) get(key string) string {
	v := ""
	for _, p := range u.all() {
		if p.key == key {
			v = p.value
		}
	}
	return v
}

var errURI = errors.New("invalid URI")

func parseURL(s string) (*uri, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, errURI
	}
	n := prefixLen(s)
	if n == 0 {
		return nil, errURI
	}
	p := s[n:]
	u := &uri{}
	add := func(key, raw string) error {
		v, err := uriDecode(raw)
		if err != nil {
			return err
		}
		u.params = append(u.params, param{key: key, value: v})
		return nil
	}
	if i := strings.IndexAny(p, "@/"); i >= 0 && p[i] == '@' {
		user, password, hasPassword := strings.Cut(p[:i], ":")
		p = p[i+1:]
		if user != "" {
			if err := add("user", user); err != nil {
				return nil, err
			}
		}
		if hasPassword && password != "" {
			if err := add("password", password); err != nil {
				return nil, err
			}
		}
	}
	var hosts, ports strings.Builder
	for {
		if strings.HasPrefix(p, "[") {
			end := strings.IndexByte(p, ']')
			if end < 1 {
				return nil, errURI
			}
			hosts.WriteString(p[1:end])
			p = p[end+1:]
			if p != "" && !strings.ContainsAny(p[:1], ":/?,") {
				return nil, errURI
			}
		} else {
			i := strings.IndexAny(p, ":/?,")
			if i < 0 {
				i = len(p)
			}
			hosts.WriteString(p[:i])
			p = p[i:]
		}
		if strings.HasPrefix(p, ":") {
			p = p[1:]
			i := strings.IndexAny(p, "/?,")
			if i < 0 {
				i = len(p)
			}
			ports.WriteString(p[:i])
			p = p[i:]
		}
		if !strings.HasPrefix(p, ",") {
			break
		}
		p = p[1:]
		hosts.WriteByte(',')
		ports.WriteByte(',')
	}
	if hosts.Len() > 0 {
		if err := add("host", hosts.String()); err != nil {
			return nil, err
		}
	}
	if ports.Len() > 0 {
		if err := add("port", ports.String()); err != nil {
			return nil, err
		}
	}
	if strings.HasPrefix(p, "/") {
		db := p[1:]
		p = ""
		if i := strings.IndexByte(db, '?'); i >= 0 {
			db, p = db[:i], db[i:]
		}
		if db != "" {
			if err := add("dbname", db); err != nil {
				return nil, err
			}
		}
	}
	if strings.HasPrefix(p, "?") {
		params := p[1:]
		for params != "" { // as pgx: a & at the end ends the query
			pair := params
			if i := strings.IndexByte(params, '&'); i >= 0 {
				pair, params = params[:i], params[i+1:]
			} else {
				params = ""
			}
			rawKey, rawValue, found := strings.Cut(pair, "=")
			if !found || strings.Contains(rawValue, "=") {
				return nil, errURI
			}
			key, err := uriDecode(rawKey)
			if err != nil {
				return nil, err
			}
			value, err := uriDecode(rawValue)
			if err != nil {
				return nil, err
			}
			if key == "ssl" && value == "true" {
				key = "sslmode" // libpq's JDBC alias
				value = "require"
			}
			u.query = append(u.query, param{key: key, value: value})
		}
	}
	// pgx refuses a port that is not a number from 1 to 65535, and ports
	// that are neither one for every host nor one for each.
	for _, port := range strings.Split(u.get("port"), ",") {
		if !validPort(port) {
			return nil, errURI
		}
	}
	if h, ps := strings.Count(u.get("host"), ","), strings.Count(u.get("port"), ","); ps > 0 && ps != h {
		return nil, errURI
	}
	return u, nil
}

// uriDecode percent-decodes a part of a URI as libpq does: % and exactly
// two hex digits, %00 refused, leading and trailing spaces dropped, a space
// inside refused.
func uriDecode(raw string) (string, error) {
	raw = strings.Trim(raw, " ")
	if strings.Contains(raw, " ") {
		return "", errURI
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] != '%' {
			b.WriteByte(raw[i])
			continue
		}
		if i+2 >= len(raw) {
			return "", errURI
		}
		hi, ok1 := hexDigit(raw[i+1])
		lo, ok2 := hexDigit(raw[i+2])
		if !ok1 || !ok2 || hi<<4|lo == 0 {
			return "", errURI
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

// decodeLenient decodes what it can of a part of a URI and keeps the rest,
// for masking a string that does not parse: keys are recognised as pgx
// would spell them.
func decodeLenient(raw string) string {
	raw = strings.Trim(raw, " ")
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == '%' && i+2 < len(raw) {
			hi, ok1 := hexDigit(raw[i+1])
			lo, ok2 := hexDigit(raw[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// validPort: empty (the default) or a number from 1 to 65535, as pgx
// accepts a port.
func validPort(s string) bool {
	if s == "" {
		return true
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535 && strings.Trim(s, "0123456789") == ""
}
