package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Sink holds the sinks the daemon ships its maps to.
type Sink struct {
	Postgres SinkPostgres `toml:"postgres"`
}

// SinkPostgres is the team database ([sink.postgres]); it is on when url or
// url_file is set. See docs/team-database.md.
type SinkPostgres struct {
	// URL is a postgres:// URL (or a libpq key=value string). Better
	// without its password, which can come from PasswordEnv, PGPASSWORD
	// or ~/.pgpass; `config show` never prints it.
	URL string `toml:"url"`
	// URLFile holds the whole URL instead (read at start, mode 0600).
	URLFile string `toml:"url_file"`
	// PasswordEnv names an environment variable holding the password.
	PasswordEnv string `toml:"password_env"`
	// PathMode is how paths leave the machine: "" follows maps.path_mode;
	// a stricter mode re-renders each map as it is sent.
	PathMode string `toml:"path_mode"`
	// HashKeyFile is the key of hashed mode for the team ("" follows
	// maps.hash_key_file): a key shared by the team makes hashed paths
	// comparable across machines.
	HashKeyFile string `toml:"hash_key_file"`
	// Device labels this machine in the team database.
	Device string `toml:"device"`
	// Every is the period of sending attempts besides those a flush
	// triggers; Batch the sessions sent per transaction.
	Every Duration `toml:"every"`
	Batch int      `toml:"batch"`
}

// Enabled reports whether the team database is configured.
func (s SinkPostgres) Enabled() bool { return s.URL != "" || s.URLFile != "" }

const (
	minSinkEvery = time.Second
	maxSinkEvery = 24 * time.Hour
	maxSinkBatch = 10_000
)

func defaultSink() Sink {
	return Sink{Postgres: SinkPostgres{Every: Duration{30 * time.Second}, Batch: 200}}
}

// pathModeRank orders the path modes by how little of a path they keep.
func pathModeRank(m string) int { return slices.Index(PathModes, m) }

func (c *Config) validateSink(p platform, add func(key, format string, args ...any)) {
	s := c.Sink.Postgres
	if s.URL != "" && s.URLFile != "" {
		add("sink.postgres.url_file", "set url or url_file, not both")
	}
	if s.URLFile != "" && !p.isAbs(s.URLFile) {
		add("sink.postgres.url_file", "must be an absolute path or start with ~/")
	}
	if s.HashKeyFile != "" && !p.isAbs(s.HashKeyFile) {
		add("sink.postgres.hash_key_file", "must be an absolute path or start with ~/")
	}
	if s.URL != "" && !strings.Contains(s.URL, "=") {
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			// The URL itself is not quoted: it may hold a password.
			add("sink.postgres.url", "is not a postgres:// URL or a key=value connection string")
		}
	}
	if s.PasswordEnv != "" && strings.ContainsAny(s.PasswordEnv, "= \t") {
		add("sink.postgres.password_env", "%q is not an environment variable name", s.PasswordEnv)
	}
	if s.PathMode != "" {
		switch {
		case !slices.Contains(PathModes, s.PathMode):
			add("sink.postgres.path_mode", "%q is not one of %s", s.PathMode, strings.Join(PathModes, ", "))
		case pathModeRank(s.PathMode) < pathModeRank(c.Maps.PathMode):
			add("sink.postgres.path_mode", "%q keeps more of a path than maps.path_mode %q: the team database cannot get what the maps do not hold",
				s.PathMode, c.Maps.PathMode)
		case s.PathMode != c.Maps.PathMode && c.Maps.PathMode != "relative":
			add("sink.postgres.path_mode", "re-rendering maps in %q needs maps.path_mode = \"relative\" (%q is one-way)",
				s.PathMode, c.Maps.PathMode)
		}
	}
	if d := s.Every.Duration; d < minSinkEvery || d > maxSinkEvery {
		add("sink.postgres.every", "must be between %s and %s", formatDuration(minSinkEvery), formatDuration(maxSinkEvery))
	}
	if s.Batch < 1 || s.Batch > maxSinkBatch {
		add("sink.postgres.batch", "must be between 1 and %d", maxSinkBatch)
	}
}

func resolveSinkPaths(c *Config, p platform) {
	c.Sink.Postgres.URLFile = p.expand(c.Sink.Postgres.URLFile)
	c.Sink.Postgres.HashKeyFile = p.expand(c.Sink.Postgres.HashKeyFile)
}

func renderSink(w *writer, c *Config, str, pathStr func(string) string) {
	s := c.Sink.Postgres
	w.blank()
	w.table("sink.postgres")
	w.comment(
		"The team database: each machine's daemon sends its maps to one PostgreSQL",
		"database, each session once, in its latest version (docs/team-database.md).",
		`Off while url and url_file are both empty. Example: "postgres://agentmap@db.example/agentmap"`,
		"Leave the password out of url: password_env, PGPASSWORD or ~/.pgpass supply it,",
		"and `config show` never prints one.",
	)
	w.kv("url", str(MaskPassword(s.URL)))
	w.comment("A file holding the whole URL instead of url (keep it mode 0600).")
	w.kv("url_file", pathStr(s.URLFile))
	w.comment("An environment variable holding the password.")
	w.kv("password_env", str(s.PasswordEnv))
	w.comment(
		`How paths leave the machine: "" as in maps.path_mode, or a stricter mode`,
		"(dirs_only, hashed) that each map is re-rendered in as it is sent.",
	)
	w.kv("path_mode", str(s.PathMode))
	w.comment(`The key of hashed mode for the team; "" uses maps.hash_key_file.`)
	w.kv("hash_key_file", pathStr(s.HashKeyFile))
	w.comment("This machine's label in the team database (its id is random and kept).")
	w.kv("device", str(s.Device))
	w.comment("How often queued maps are sent besides right after a flush, and how many per transaction.")
	w.kv("every", str(s.Every.String()))
	w.kv("batch", strconv.Itoa(s.Batch))
}

// MaskPassword hides every password of a connection string, as libpq and
// pgx would read one: the password of a URL's user information, a
// password=… parameter of its query, and the password of a key=value
// string (spaces around the =, a single-quoted value with \' and \\
// escapes). The rest of the string is kept as written. A part that does not
// parse is masked whole from where parsing stops: what cannot be read with
// certainty may hold a password.
func MaskPassword(s string) string {
	spans := secretSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp.start < at {
			sp.start = at
		}
		if sp.end <= sp.start {
			continue
		}
		b.WriteString(s[at:sp.start])
		b.WriteString(masked)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

const masked = "xxxxx"

// ConnTarget names what a connection string connects to, for a heading or
// a message: the database, its hosts and ports, and the user, and nothing
// else (never a password, an option or the string itself), such as
// "agentmap on db.example.com:5432 as reader". Parts the string leaves to
// the environment are left out; "" when it names none or does not parse.
func ConnTarget(s string) string {
	ps, ok := connParams(s)
	if !ok {
		return ""
	}
	get := func(key string) string {
		v := ""
		for _, p := range ps {
			if p.key == key {
				v = p.value // the last one wins, as in libpq
			}
		}
		return v
	}
	host := get("host")
	if host == "" {
		host = get("hostaddr")
	}
	hosts, ports := splitList(host), splitList(get("port"))
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
			if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
				h = "[" + h + "]" // an IPv6 address
			}
			h += ":" + port
		}
		where = append(where, h)
	}
	if len(hosts) == 0 && len(ports) > 0 {
		where = append(where, "port "+strings.Join(ports, ","))
	}
	var parts []string
	if db := get("dbname"); db != "" && !strings.ContainsAny(db, "=") && !isURL(db) {
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
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// HasPassword reports whether a connection string holds a password.
func HasPassword(s string) bool { return len(secretSpans(s)) > 0 }

// connParam is one parameter of a connection string: its key, its value
// (unquoted and unescaped) and where the value is written in the string.
type connParam struct {
	key, value string
	start, end int
}

// span is a part of a connection string to mask, [start, end).
type span struct{ start, end int }

// secretSpans are the parts of s that hold a password, in order and not
// overlapping.
func secretSpans(s string) []span {
	var out []span
	if isURL(s) {
		out = urlSecrets(s)
	} else {
		ps, bad := keywordParams(s)
		for _, p := range ps {
			if isSecretParam(p) {
				out = append(out, span{p.start, p.end})
			}
		}
		if bad >= 0 {
			out = append(out, span{bad, len(s)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	// Merge overlapping spans.
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

// isSecretParam: a password, or a dbname that is itself a connection string
// holding one (libpq expands such a dbname).
func isSecretParam(p connParam) bool {
	k := strings.ToLower(p.key)
	if k == "password" {
		return true
	}
	return k == "dbname" && (strings.Contains(p.value, "=") || isURL(p.value)) && HasPassword(p.value)
}

// isURL reports whether s is a URL (scheme://…), as libpq tells a URI from
// key=value pairs by its prefix.
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for j, r := range s[:i] {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// keywordParams parses libpq's key=value grammar: pairs separated by
// white space; white space around the = is allowed; a value is a run of
// non-space characters or a single-quoted string, and in both a backslash
// escapes the next character. bad is the offset from which the string
// does not parse (-1 when it all does).
func keywordParams(s string) ([]connParam, int) {
	var out []connParam
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
		out = append(out, connParam{key: key, value: v.String(), start: vstart, end: i})
	}
}

// urlSecrets finds the passwords of a URL. libpq and Go's url package
// (which pgx uses) do not split a URL alike where it holds characters that
// should have been escaped: the user information ends at libpq's first @
// before a /, or at Go's last @ before the first /, ? or #; and the query
// starts at Go's first ? or at libpq's first ? after the user information.
// Every password either would read is masked, and in a URL Go cannot parse
// everything between the first : and the last @.
func urlSecrets(s string) []span {
	var out []span
	p0 := strings.Index(s, "://") + 3
	rest := s[p0:]
	ends := map[int]bool{}
	// libpq: the first @ before a /.
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		ends[i] = true
	}
	// Go: the last @ of the authority.
	auth := rest
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		ends[i] = true
	}
	// A URL that Go does not parse (a password with a / not escaped, say)
	// is read by neither as written: mask up to its last @ too.
	if _, err := url.Parse(s); err != nil {
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			ends[i] = true
		}
	}
	queryAt := map[int]bool{}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		queryAt[i+1] = true
	}
	for end := range ends {
		if c := strings.IndexByte(rest[:end], ':'); c >= 0 {
			out = append(out, span{p0 + c + 1, p0 + end})
		}
		if i := strings.IndexByte(rest[end:], '?'); i >= 0 {
			queryAt[end+i+1] = true
		}
	}
	for q := range queryAt {
		off := p0 + q
		for _, kv := range strings.Split(s[off:], "&") {
			k, v, _ := strings.Cut(kv, "=")
			key, err := url.QueryUnescape(k)
			if err != nil {
				key = k
			}
			val, err := url.QueryUnescape(v)
			if err != nil {
				val = v
			}
			if isSecretParam(connParam{key: key, value: val}) {
				start := off + len(k) + 1
				if i := strings.IndexByte(v, '#'); i >= 0 {
					v = v[:i]
				}
				out = append(out, span{start, start + len(v)})
			}
			off += len(kv) + 1
		}
	}
	return out
}

// connParams reads the parameters of a connection string as pgx does
// (user, password, host, port, dbname and the query's or the pairs' own),
// for ConnTarget; ok is false when the string does not parse.
func connParams(s string) ([]connParam, bool) {
	if !isURL(s) {
		ps, bad := keywordParams(s)
		return ps, bad < 0
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, false
	}
	var out []connParam
	if u.User != nil {
		out = append(out, connParam{key: "user", value: u.User.Username()})
	}
	if u.Host != "" {
		var hosts, ports []string
		for _, h := range strings.Split(u.Host, ",") {
			host, port := h, ""
			if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
				host, port = h[:i], h[i+1:]
			}
			hosts = append(hosts, strings.Trim(host, "[]"))
			ports = append(ports, port)
		}
		out = append(out, connParam{key: "host", value: strings.Join(hosts, ",")})
		if strings.Join(ports, "") != "" {
			out = append(out, connParam{key: "port", value: strings.Join(ports, ",")})
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		out = append(out, connParam{key: "dbname", value: db})
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, false
	}
	for _, k := range []string{"host", "hostaddr", "port", "dbname", "user"} {
		if v := q.Get(k); v != "" {
			out = append(out, connParam{key: k, value: v})
		}
	}
	return out, true
}

// SinkURL returns the team database's URL from url or url_file, with the
// password from password_env when the variable is set and the URL has none.
func (s SinkPostgres) SinkURL() (string, error) {
	raw := s.URL
	if s.URLFile != "" {
		b, err := os.ReadFile(s.URLFile)
		if err != nil {
			return "", fmt.Errorf("sink.postgres.url_file: %w", err)
		}
		raw = strings.TrimSpace(string(b))
		if raw == "" {
			return "", errors.New("sink.postgres.url_file: the file is empty")
		}
	}
	if s.PasswordEnv == "" {
		return raw, nil
	}
	pw, ok := os.LookupEnv(s.PasswordEnv)
	if !ok {
		return "", fmt.Errorf("sink.postgres.password_env: %s is not set", s.PasswordEnv)
	}
	if HasPassword(raw) {
		return raw, nil // the URL's own password wins
	}
	if isURL(raw) {
		u, err := url.Parse(raw)
		if err != nil {
			// The parse error quotes the URL.
			return "", errors.New("sink.postgres.url is not a URL that parses")
		}
		u.User = url.UserPassword(u.User.Username(), pw)
		return u.String(), nil
	}
	return raw + " password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'", nil
}
