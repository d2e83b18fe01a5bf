// Package connstr reads a PostgreSQL connection string as the team sink's
// driver, pgx v5, reads it, to say what it connects to, to mask its secrets
// and to refuse what pgx would misread.
//
// pgx (pgconn.ParseConfig) takes a string for a URI only when it starts
// exactly with "postgres://" or "postgresql://", and parses it with a copy of
// libpq's URI parser (pgconn/parse_url.go): the user information ends at the
// first @ before any /, the password at that @ (a /, ? or # in it is part of
// it; there is no fragment), hosts and ports run to the first /, the query to
// the end. Anything else, a leading space included, is libpq's key=value
// grammar, in which a keyword is whatever precedes an =: pgx sends a keyword
// it does not know to the server as a run-time parameter, and the server's
// refusal quotes it (a URL pasted after key=value pairs reaches a log as
// `unrecognized configuration parameter "postgres://u:password@h/db?sslmode"`).
// Check refuses such strings, Mask masks them, and the sink's Open refuses a
// parameter it does not pass on.
package connstr

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// keywords are the connection keywords of libpq (PostgreSQL 18's
// PQconninfoOptions, and requiressl of older releases) and those pgx and
// pgxpool read besides (servicefile, krbspn, the statement caches, the
// query mode and the pool's settings). Keywords are case-sensitive, as in
// libpq.
var keywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
		service user password passfile channel_binding connect_timeout dbname database host hostaddr port
		client_encoding options application_name fallback_application_name keepalives keepalives_idle
		keepalives_interval keepalives_count tcp_user_timeout sslmode sslnegotiation sslcompression sslcert
		sslkey sslkeylogfile sslcertmode sslpassword sslrootcert sslcrl sslcrldir sslsni requirepeer
		require_auth min_protocol_version max_protocol_version ssl_min_protocol_version
		ssl_max_protocol_version gssencmode krbsrvname gsslib gssdelegation scram_client_key
		scram_server_key target_session_attrs load_balance_hosts oauth_issuer oauth_client_id
		oauth_client_secret oauth_scope replication requiressl
		servicefile krbspn statement_cache_capacity description_cache_capacity default_query_exec_mode
		pool_max_conns pool_min_conns pool_min_idle_conns pool_max_conn_lifetime pool_max_conn_idle_time
		pool_health_check_period pool_max_conn_lifetime_jitter pool_ping_timeout`) {
		keywords[k] = true
	}
}

// secrets are the keywords whose value is a secret: the password, the
// client key's password, the OAuth client secret and the SCRAM keys.
var secrets = map[string]bool{"password": true, "sslpassword": true, "oauth_client_secret": true,
	"scram_client_key": true, "scram_server_key": true}

// Keyword reports whether k is a connection keyword of libpq or pgx.
func Keyword(k string) bool { return keywords[k] }

// Secret reports whether the value of keyword k is a secret.
func Secret(k string) bool { return secrets[k] }

// IsURL reports whether pgx reads s as a URI: it starts exactly with
// postgres:// or postgresql://.
func IsURL(s string) bool { return prefixLen(s) > 0 }

func prefixLen(s string) int {
	for _, p := range []string{"postgresql://", "postgres://"} {
		if strings.HasPrefix(s, p) {
			return len(p)
		}
	}
	return 0
}

// The reasons Check refuses a string. None quotes any of it.
var (
	ErrSpace     = errors.New("starts or ends with white space: remove it (with a space before it, a URL is not read as a URL)")
	ErrAt        = errors.New("has an @ that does not end the user name and password: percent-encode @ / ? # in the password (%40 %2F %3F %23)")
	ErrURL       = errors.New("is a postgres:// URL that does not parse: percent-encode spaces, % and @ / ? # in the user name and password, give ports as numbers and each query parameter as key=value")
	ErrKeyValue  = errors.New("is neither a postgres:// (or postgresql://) URL nor a libpq key=value connection string that parses")
	ErrQueryKey  = errors.New("has a query parameter that is not a libpq connection keyword")
	ErrKeyword   = errors.New("has a key that is not a libpq connection keyword (a URL must start with postgres:// or postgresql://, with nothing before it)")
	ErrDBName    = errors.New("has a dbname that is itself a connection string, which pgx does not expand: give its parts as parameters")
	ErrJoined    = errors.New("has an = in a user, host, hostaddr or port value: a space missing between two key=value pairs?")
	ErrWideSpace = errors.New("holds a space that is not ASCII (a non-breaking space, say, pasted between two pairs): write plain spaces")
)

// joinable are the keywords whose values never hold an =: one that does is
// two pairs run together (user=upassword=secret), whose second would be
// shown as a user or a host name.
var joinable = map[string]bool{"user": true, "host": true, "hostaddr": true, "port": true}

// wideSpace reports whether s holds white space beyond ASCII, which
// libpq's grammar does not take for a separator.
func wideSpace(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r > 0x7f && unicode.IsSpace(r) })
}

// holdsSecret reports whether a value holds what reads as a secret
// keyword's assignment (host=dbpassword=secret): masked wherever it is.
func holdsSecret(v string) bool {
	for k := range secrets {
		if strings.Contains(v, k+"=") {
			return true
		}
	}
	return false
}

// Check reports whether pgx reads s as it is meant to be read, with an error
// that quotes none of it: no white space around it (a space before a URL
// makes it key=value pairs); in a URL, at most one @, before any / (an @ or
// / not percent-encoded in a password splits it into host, port and
// database), a URI that parses as libpq's parser does and query keys that
// are connection keywords; in key=value pairs, the grammar, and keys that
// are connection keywords (anything else is sent to the server, which
// quotes it back); in both, a dbname that is not itself a connection
// string. "" (nothing but the environment) is fine.
func Check(s string) error {
	if s == "" {
		return nil
	}
	if strings.TrimSpace(s) != s {
		return ErrSpace
	}
	if wideSpace(s) {
		return ErrWideSpace
	}
	if IsURL(s) {
		rest := s[prefixLen(s):]
		// pgx's user information ends at the first @ before any /; an @
		// in the hosts, ports or path after it is a password's that was
		// not escaped, and pgx would connect to a piece of it. An @ in a
		// query value (user=alice@example.com) is the value's.
		tail := rest
		if at := strings.IndexByte(rest, '@'); at >= 0 {
			if sl := strings.IndexByte(rest, '/'); sl < 0 || at < sl {
				tail = rest[at+1:]
			}
		}
		if q := strings.IndexByte(tail, '?'); q >= 0 {
			tail = tail[:q]
		}
		if strings.Contains(tail, "@") {
			return ErrAt
		}
		u, err := parseURL(s)
		if err != nil {
			return ErrURL
		}
		for _, p := range u.query {
			if !Keyword(p.key) { // ssl=true is read as sslmode=require; another ssl goes to the server
				return ErrQueryKey
			}
		}
		for _, p := range u.all() {
			if joinable[p.key] && strings.Contains(p.value, "=") {
				return ErrJoined
			}
		}
		if db := u.get("dbname"); isConnString(db) {
			return ErrDBName
		}
		return nil
	}
	ps, bad := keywordParams(s)
	if bad >= 0 || len(ps) == 0 {
		return ErrKeyValue
	}
	for _, p := range ps {
		if !Keyword(p.key) {
			return ErrKeyword
		}
		if p.key == "dbname" && isConnString(p.value) {
			return ErrDBName
		}
		if joinable[p.key] && strings.Contains(p.value, "=") {
			return ErrJoined
		}
	}
	return nil
}

// isConnString: a value libpq would expand as a connection string of its
// own where it is a dbname.
func isConnString(v string) bool { return strings.Contains(v, "=") || IsURL(v) }

// Param is one parameter of a connection string, as pgx reads it: its key
// as written (a URL's user information, hosts, ports and path under user,
// password, host, port and dbname) and its value, decoded.
type Param struct {
	Key, Value string
}

// Params are the parameters of s in the order pgx reads them (a later one
// of the same key wins), or nil when Check refuses s.
func Params(s string) []Param {
	if Check(s) != nil {
		return nil
	}
	var out []Param
	if IsURL(s) {
		u, _ := parseURL(s)
		for _, p := range u.all() {
			out = append(out, Param{p.key, p.value})
		}
		return out
	}
	ps, _ := keywordParams(s)
	for _, p := range ps {
		out = append(out, Param{p.key, p.value})
	}
	return out
}

// Target names what s connects to, for a heading or a message: the
// database, its hosts and ports, and the user, and nothing else (never a
// password, an option or the string itself), such as "agentmap on
// db.example.com:5432 as reader". Parts the string leaves to the
// environment are left out; "" when it names none, or when Check refuses
// it (a part read from a malformed string can hold a piece of the
// password).
func Target(s string) string {
	ps := Params(s)
	if ps == nil {
		return ""
	}
	get := func(key string) string {
		v := ""
		for _, p := range ps {
			if p.Key == key {
				v = p.Value // the last one wins, as in libpq and pgx
			}
		}
		return v
	}
	host := get("host")
	if host == "" {
		host = get("hostaddr")
	}
	hosts, ports := splitList(host), splitList(get("port"))
	for _, p := range ports {
		if !validPort(p) {
			return "" // pgx does not connect with it
		}
	}
	var where []string
	for i, h := range hosts {
		port := ""
		switch {
		case i < len(ports):
			port = ports[i]
		case len(ports) == 1:
			port = ports[0]
		}
		if port != "" {
			if strings.Contains(h, ":") {
				h = "[" + h + "]" // an IPv6 address
			}
			h += ":" + port
		}
		where = append(where, h)
	}
	if len(hosts) == 0 && strings.Join(ports, "") != "" {
		where = append(where, "port "+strings.Join(ports, ","))
	}
	var parts []string
	if db := get("dbname"); db != "" {
		parts = append(parts, db)
	}
	if len(where) > 0 {
		parts = append(parts, "on "+strings.Join(where, ","))
	}
	if u := get("user"); u != "" {
		parts = append(parts, "as "+u)
	}
	return strings.Join(parts, " ")
}

func splitList(s string) []string {
	if strings.Trim(s, ",") == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Masked is what stands for a secret in Mask's output.
const Masked = "xxxxx"

// Mask hides every secret of a connection string and whatever pgx might
// read one from, and keeps the rest as written:
//
//   - in a URL, everything from the first : after :// to the last @ (the
//     password as pgx reads it, and whatever an @, / or ? not escaped in
//     the password would make a host, port or database of);
//   - the value of password, sslpassword, oauth_client_secret,
//     scram_client_key and scram_server_key, in a URL's query or in
//     key=value pairs (spaces around the =, a single-quoted value with \'
//     and \\ escapes);
//   - a dbname that is a connection string holding one;
//   - the key and the value of a parameter whose key is not a connection
//     keyword (pgx sends it to the server: it is what a URL pasted after
//     key=value pairs becomes);
//   - key=value pairs from where they stop parsing.
func Mask(s string) string {
	spans := secretSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp.end <= sp.start {
			continue // nothing to hide (password=)
		}
		b.WriteString(s[at:sp.start])
		b.WriteString(Masked)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// HasPassword reports whether s sets the login password: a URL's user
// information with one (or what may be one: anything between the first :
// and the last @), or a password parameter that is not empty.
func HasPassword(s string) bool {
	if IsURL(s) {
		rest := s[prefixLen(s):]
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if c := strings.IndexByte(rest, ':'); c >= 0 && c+1 < at {
				return true
			}
		}
		for _, off := range queryStarts(s) {
			for _, p := range queryPairs(s, off) {
				if p.key == "password" && p.value != "" {
					return true
				}
			}
		}
		return false
	}
	ps, _ := keywordParams(s)
	for _, p := range ps {
		if p.key == "password" && p.value != "" {
			return true
		}
	}
	return false
}

// WithPassword returns URL s with password pw in its user information
// (percent-encoded), for a URL that has none.
func WithPassword(s, pw string) string {
	p0 := prefixLen(s)
	rest := s[p0:]
	enc := percentEncode(pw)
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		user, _, _ := strings.Cut(rest[:i], ":")
		return s[:p0] + user + ":" + enc + rest[i:]
	}
	return s[:p0] + ":" + enc + "@" + rest
}

func percentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// span is a part of a connection string to mask, [start, end).
type span struct{ start, end int }

// param is one parameter of a connection string: its key, its value
// (unquoted and unescaped), where the key starts and where the value is
// written.
type param struct {
	key, value         string
	kstart, start, end int
}

// secretSpans are the parts of s to mask, in order and not overlapping.
func secretSpans(s string) []span {
	var out []span
	if IsURL(s) {
		out = urlSecrets(s)
	} else {
		ps, bad := keywordParams(s)
		for _, p := range ps {
			switch {
			case !Keyword(p.key):
				out = append(out, span{p.kstart, p.end})
			case Secret(p.key), p.key == "dbname" && isConnString(p.value) && Mask(p.value) != p.value, holdsSecret(p.value):
				out = append(out, span{p.start, p.end})
			}
		}
		if bad >= 0 {
			out = append(out, span{bad, len(s)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	var merged []span
	for _, sp := range out {
		if n := len(merged); n > 0 && sp.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// urlSecrets finds the secrets of a URL: from the first : after :// to
// the last @ when there is an @ (libpq's and pgx's password ends at the
// first @ before any /; what follows it up to the last @ is a piece of the
// password when the password held an @ or a / not escaped), and in the
// query, as pgx reads it and as it would be read after the last @, the
// secrets and the parameters that are not connection keywords.
func urlSecrets(s string) []span {
	var out []span
	p0 := prefixLen(s)
	rest := s[p0:]
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if c := strings.IndexByte(rest, ':'); c >= 0 && c < at {
			out = append(out, span{p0 + c + 1, p0 + at})
		}
	}
	for _, off := range queryStarts(s) {
		for _, p := range queryPairs(s, off) {
			switch {
			case p.key == "":
			case !Keyword(p.key) && (p.key != "ssl" || p.value != "true"):
				out = append(out, span{p.kstart, p.end})
			case Secret(p.key), p.key == "dbname" && isConnString(p.value) && Mask(p.value) != p.value, holdsSecret(p.value):
				if p.start >= 0 {
					out = append(out, span{p.start, p.end})
				}
			}
		}
	}
	return out
}

// queryStarts are the offsets in URL s where a query may start: the first ?
// after the user information as pgx reads it, and the first ? after the
// last @.
func queryStarts(s string) []int {
	p0 := prefixLen(s)
	rest := s[p0:]
	from := []int{0}
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		from[0] = i + 1
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		from = append(from, at+1)
	}
	var out []int
	for _, f := range from {
		if q := strings.IndexByte(rest[f:], '?'); q >= 0 && !slices.Contains(out, p0+f+q+1) {
			out = append(out, p0+f+q+1)
		}
	}
	return out
}

// queryPairs reads the &-separated pairs of a query from offset off of s,
// keys decoded leniently (pass%77ord is password), values as written up to
// the next & (start is -1 without an =).
func queryPairs(s string, off int) []param {
	var out []param
	for _, kv := range strings.Split(s[off:], "&") {
		k, v, found := strings.Cut(kv, "=")
		p := param{key: decodeLenient(k), value: decodeLenient(v), kstart: off, start: -1, end: off + len(kv)}
		if found {
			p.start = off + len(k) + 1
		}
		if kv != "" {
			out = append(out, p)
		}
		off += len(kv) + 1
	}
	return out
}

// keywordParams parses libpq's key=value grammar: pairs separated by
// white space; white space around the = is allowed; a value is a run of
// non-space characters or a single-quoted string, and in both a backslash
// escapes the next character. bad is the offset from which the string
// does not parse (-1 when it all does).
func keywordParams(s string) ([]param, int) {
	var out []param
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' }
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return out, -1
		}
		start := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[start:i]
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] != '=' || key == "" {
			return out, start
		}
		i++ // the =
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		vstart := i
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' {
					i++
					if i < len(s) {
						v.WriteByte(s[i])
						i++
					}
					continue
				}
				if c == '\'' {
					i++
					closed = true
					break
				}
				v.WriteByte(c)
				i++
			}
			if !closed {
				return out, vstart // an unterminated quote: the rest is its value
			}
		} else {
			for i < len(s) && !isSpace(s[i]) {
				if s[i] == '\\' {
					i++
					if i < len(s) {
						v.WriteByte(s[i])
						i++
					}
					continue
				}
				v.WriteByte(s[i])
				i++
			}
		}
		out = append(out, param{key: key, value: v.String(), kstart: start, start: vstart, end: i})
	}
}
