package config

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmap/agentmap/docs"
	"github.com/agentmap/agentmap/internal/regular"
	"github.com/agentmap/agentmap/sink/connstr"
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
	if err := connstr.Check(s.URL); err != nil {
		// What is wrong, never the URL itself: it may hold a password.
		add("sink.postgres.url", "%s", err.Error())
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
	// An inline URL is trimmed as url_file's is: a TOML """…""" string
	// ends with its newline, and a space before postgres:// would make pgx
	// read the URL as key=value pairs.
	c.Sink.Postgres.URL = strings.TrimSpace(c.Sink.Postgres.URL)
	c.Sink.Postgres.URLFile = p.expand(c.Sink.Postgres.URLFile)
	c.Sink.Postgres.HashKeyFile = p.expand(c.Sink.Postgres.HashKeyFile)
}

func renderSink(w *writer, c *Config, str, pathStr func(string) string) {
	s := c.Sink.Postgres
	w.blank()
	w.table("sink.postgres")
	w.comment(
		"The team database: each machine's daemon sends its maps to one PostgreSQL",
		"database, each session once, in its latest version. The setup, schema and",
		// Where the document is on the machine that writes the file: a
		// package has no docs/ folder.
		"views: "+docs.Path(docs.TeamDatabase),
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

// MaskPassword hides every secret of a connection string, and whatever pgx
// might read one from, and keeps the rest as written (connstr.Mask): the
// password of a URL's user information, with anything an @ or / not
// escaped in it would spread to (from the first : after :// to the last
// @); the value of password, sslpassword, oauth_client_secret and the SCRAM
// keys, in a URL's query or in key=value pairs in any of libpq's spellings;
// a dbname that is a connection string holding one; the key and value of a
// parameter that is not a connection keyword (a URL pasted after key=value
// pairs is one); and key=value pairs from where they stop parsing.
func MaskPassword(s string) string { return connstr.Mask(s) }

// ConnTarget names what a connection string connects to, for a heading or
// a message: the database, its hosts and ports, and the user, and nothing
// else (never a password, an option or the string itself), such as
// "agentmap on db.example.com:5432 as reader", read as pgx reads the
// string. Parts the string leaves to the environment are left out; "" when
// it names none, or when it is a string pgx would misread (connstr.Check):
// a part of such a string can hold a piece of the password.
func ConnTarget(s string) string { return connstr.Target(s) }

// HasPassword reports whether a connection string sets the login password.
func HasPassword(s string) bool { return connstr.HasPassword(s) }

// URLFileWarning is what to say when url_file can be read by its group or
// by others: it holds the whole URL, password included, and is meant to be
// its owner's alone (mode 0600). "" when it cannot, when there is no
// url_file or it cannot be read (SinkURL says so), and on Windows, whose
// permissions the mode bits do not tell. It names the file and its mode,
// never what it holds. A warning, not a problem of the config: the file
// works all the same, as it did before it was checked.
func (s SinkPostgres) URLFileWarning() string {
	if s.URLFile == "" || runtime.GOOS == "windows" {
		return ""
	}
	fi, err := os.Stat(s.URLFile)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("sink.postgres.url_file %s can be read by its group or by others (mode %04o), and it holds the team database's URL with its password: chmod 600 %s",
		s.URLFile, fi.Mode().Perm(), s.URLFile)
}

// PasswordEnvWarning says that the password comes from a variable a
// service will not have: a service starts without the shell's environment
// (and its file must not hold a password), so the password_env that works
// from a terminal leaves the installed daemon sending nothing. "" when the
// URL holds its password, or no password_env is set.
func (s SinkPostgres) PasswordEnvWarning() string {
	if !s.Enabled() || s.PasswordEnv == "" {
		return ""
	}
	if raw, err := s.rawURL(); err == nil && HasPassword(raw) {
		return ""
	}
	return fmt.Sprintf("sink.postgres.password_env names $%s, which the service does not have (it starts without this shell's variables): "+
		"it would send nothing to the team database. Keep the password in a url_file (mode 0600) or ~/.pgpass instead", s.PasswordEnv)
}

// rawURL is url, or what url_file holds.
func (s SinkPostgres) rawURL() (string, error) {
	if s.URLFile == "" {
		return s.URL, nil
	}
	// Not waited on when it is a named pipe: the daemon reads it at
	// every start and reload.
	b, err := regular.ReadFile(s.URLFile)
	if err != nil {
		return "", fmt.Errorf("sink.postgres.url_file: %w", err)
	}
	raw := strings.TrimSpace(string(b))
	if raw == "" {
		return "", errors.New("sink.postgres.url_file: the file is empty")
	}
	return raw, nil
}

// SinkURL returns the team database's URL from url or url_file, with the
// password from password_env when the variable is set and the URL has none.
func (s SinkPostgres) SinkURL() (string, error) {
	raw, err := s.rawURL()
	if err != nil {
		return "", err
	}
	if s.PasswordEnv == "" || HasPassword(raw) {
		return raw, nil // the URL's own password wins: the variable is not needed
	}
	pw, ok := os.LookupEnv(s.PasswordEnv)
	if !ok {
		return "", fmt.Errorf("sink.postgres.password_env: %s is not set", s.PasswordEnv)
	}
	if connstr.IsURL(raw) {
		return connstr.WithPassword(raw, pw), nil
	}
	return raw + " password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'", nil
}
