package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestSinkConfigLoadsAndValidates(t *testing.T) {
	p := linux(nil)
	doc := `
[maps]
path_mode = "relative"

[sink.postgres]
url = "postgres://agentmap:s3cret-pw@db.example:5432/agentmap?sslmode=require"
path_mode = "hashed"
hash_key_file = "~/team.key"
device = "alice-laptop"
every = "10s"
batch = 50
`
	c, err := parse("c.toml", doc, p)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Sink.Postgres
	if !s.Enabled() || s.PathMode != "hashed" || s.HashKeyFile != "/home/u/team.key" || s.Device != "alice-laptop" ||
		s.Every.Duration.Seconds() != 10 || s.Batch != 50 {
		t.Fatalf("loaded %+v", s)
	}
	if shown := string(render(c, p, false)); strings.Contains(shown, "s3cret-pw") || !strings.Contains(shown, "agentmap:xxxxx@db.example") {
		t.Fatalf("config show prints the password or loses the URL:\n%s", shown)
	}
	// config show masks a key=value string's password however it is
	// spelled (spaces around the =, quoted with a space).
	for _, url := range []string{"host=db port=5432 user=o password = ownerpw dbname=agentmap", "host=db user=o password='owner pw' dbname=agentmap",
		"host=db user=o sslpassword=ownerpw sslkey=/k dbname=agentmap"} {
		c, err := parse("c.toml", "[sink.postgres]\nurl = \""+strings.ReplaceAll(url, "'", "\\u0027")+"\"\n", p)
		if err != nil {
			t.Fatal(err)
		}
		if shown := string(render(c, p, false)); strings.Contains(shown, "ownerpw") || strings.Contains(shown, " pw'") || !strings.Contains(shown, "password") || !strings.Contains(shown, "xxxxx") {
			t.Fatalf("config show of %q:\n%s", url, shown)
		}
	}
	// What pgx reads as meant is accepted.
	for _, url := range []string{"postgres://agentmap_sink@db.example.com:5432/agentmap?sslmode=verify-full",
		"postgresql://u:p%40ss%2Fw@h1:5432,h2:5433/agentmap?application_name=laptop&ssl=true",
		"postgres:///agentmap?host=/run/postgresql", "host=db port=5432 user=o dbname=agentmap sslmode=require",
		"host=db user=o password='a b' application_name=x"} {
		if _, err := parse("c.toml", "[sink.postgres]\nurl = \""+strings.ReplaceAll(url, "'", "\\u0027")+"\"\n", p); err != nil {
			t.Errorf("%q: %v", url, err)
		}
	}
	if Default().Sink.Postgres.Enabled() {
		t.Fatal("the team sink is on by default")
	}
	for _, c := range []struct{ doc, key string }{
		{"[sink.postgres]\nurl = \"mysql://x\"\n", "sink.postgres.url"},
		{"[sink.postgres]\nurl = \"postgres://x\"\nurl_file = \"/f\"\n", "sink.postgres.url_file"},
		{"[sink.postgres]\nurl_file = \"rel/f\"\n", "sink.postgres.url_file"},
		{"[maps]\npath_mode = \"hashed\"\n[sink.postgres]\npath_mode = \"dirs_only\"\n", "sink.postgres.path_mode"},
		{"[maps]\npath_mode = \"dirs_only\"\n[sink.postgres]\npath_mode = \"hashed\"\n", "sink.postgres.path_mode"},
		{"[sink.postgres]\npath_mode = \"secret\"\n", "sink.postgres.path_mode"},
		{"[sink.postgres]\nevery = \"10ms\"\n", "sink.postgres.every"},
		{"[sink.postgres]\nbatch = 0\n", "sink.postgres.batch"},
		{"[sink.postgres]\npasword_env = \"X\"\n", "sink.postgres.pasword_env"},
		// Strings pgx would misread, refused without being quoted: white
		// space around them (a space before a URL makes key=value pairs
		// of it), a key that is not a connection keyword (pgx sends it to
		// the server, which quotes it back), an @ or / not escaped in a
		// URL's password.
		{"[sink.postgres]\nurl = \"host=h user=u dbname=postgres postgres://u:SECRETPW@h/db?sslmode=disable\"\n", "sink.postgres.url"},
		{"[sink.postgres]\nurl = \"host=h SECRETPW=x\"\n", "sink.postgres.url"},
		{"[sink.postgres]\nurl = \"postgres://u@h/db?SECRETPW=x\"\n", "sink.postgres.url"},
		{"[sink.postgres]\nurl = \"postgres://u:SECRETPW@x@h/db\"\n", "sink.postgres.url"},
		{"[sink.postgres]\nurl = \"postgres://u:SECRET/PW@h/db\"\n", "sink.postgres.url"},
		{"[sink.postgres]\nurl = \"postgres://u:SECRETPW@h:port/db\"\n", "sink.postgres.url"},
		{"[sink.postgres]\nurl = \"dbname='postgres://u:SECRETPW@h/db'\"\n", "sink.postgres.url"},
	} {
		_, err := parse("c.toml", c.doc, p)
		found := false
		for _, pr := range Problems(err) {
			found = found || pr.Key == c.key
		}
		if !found {
			t.Errorf("%q: want a problem with %s, got %v", c.doc, c.key, err)
		}
		if err != nil && (strings.Contains(err.Error(), "mysql://x") || strings.Contains(err.Error(), "SECRET")) {
			t.Errorf("a problem quotes the URL: %v", err)
		}
	}
}

func TestSinkURLSources(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "url")
	os.WriteFile(f, []byte("postgres://team@db/agentmap\n"), 0o600)
	t.Setenv("AGENTMAP_TEST_PW", "p@ss word")
	for _, c := range []struct {
		s    SinkPostgres
		want string
	}{
		{SinkPostgres{URL: "postgres://a:b@h/d"}, "postgres://a:b@h/d"},
		{SinkPostgres{URLFile: f}, "postgres://team@db/agentmap"},
		{SinkPostgres{URLFile: f, PasswordEnv: "AGENTMAP_TEST_PW"}, "postgres://team:p%40ss%20word@db/agentmap"},
		{SinkPostgres{URL: "host=db user=team", PasswordEnv: "AGENTMAP_TEST_PW"}, "host=db user=team password='p@ss word'"},
		{SinkPostgres{URL: "postgres://db/agentmap", PasswordEnv: "AGENTMAP_TEST_PW"}, "postgres://:p%40ss%20word@db/agentmap"},
		{SinkPostgres{URL: "postgres://team:@db,db2:5433/agentmap?sslmode=require", PasswordEnv: "AGENTMAP_TEST_PW"},
			"postgres://team:p%40ss%20word@db,db2:5433/agentmap?sslmode=require"},
	} {
		got, err := c.s.SinkURL()
		if err != nil || got != c.want {
			t.Errorf("%+v: %q %v, want %q", c.s, got, err, c.want)
		}
		// pgx reads the password that was put in.
		if pc, err := pgconn.ParseConfig(got); err != nil || (c.s.PasswordEnv != "" && pc.Password != "p@ss word") {
			t.Errorf("%+v: pgx reads %q as %v", c.s, got, err)
		}
	}
	if _, err := (SinkPostgres{URL: "postgres://h/d", PasswordEnv: "AGENTMAP_TEST_UNSET"}).SinkURL(); err == nil {
		t.Error("an unset password variable went unnoticed")
	}
	// A password already in the string wins over password_env, whatever
	// form it is written in.
	for _, raw := range []string{"host=db user=team password = own", "host=db password='o w n'", "postgres://u@h/d?password=own"} {
		if got, err := (SinkPostgres{URL: raw, PasswordEnv: "AGENTMAP_TEST_PW"}).SinkURL(); err != nil || got != raw {
			t.Errorf("%q with password_env: %q %v, want it as it is", raw, got, err)
		}
	}
}

// TestMaskPassword: every secret pgx reads, and whatever it might read one
// from, is masked, and the rest of the string stays as written.
func TestMaskPassword(t *testing.T) {
	for _, c := range []struct{ in, want, secret string }{
		{"postgres://u:pw@h/d", "postgres://u:xxxxx@h/d", "pw"},
		{"postgresql://u:pw@h:5432/d?sslmode=require", "postgresql://u:xxxxx@h:5432/d?sslmode=require", "pw"},
		{"postgres://u@h/d?password=pw", "postgres://u@h/d?password=xxxxx", "pw"},
		{"postgres://u@h/d?sslmode=disable&password=pw&application_name=x", "postgres://u@h/d?sslmode=disable&password=xxxxx&application_name=x", "pw"},
		{"postgres://u@h/d?PASSWORD=pw", "postgres://u@h/d?xxxxx", "pw"}, // not a keyword: pgx would send it to the server
		{"postgres://u@h/d?pass%77ord=pw", "postgres://u@h/d?pass%77ord=xxxxx", "pw"},
		{"postgres://u:p%40ss%20w@h/d", "postgres://u:xxxxx@h/d", "p%40ss"},
		{"postgres://u:pw@h1:5432,h2:5433/d", "postgres://u:xxxxx@h1:5432,h2:5433/d", "pw"},
		{"postgres://u:p@ss@h/d", "postgres://u:xxxxx@h/d", "ss"},                          // an @ not escaped
		{"postgres://user@server:pw@h/d", "postgres://user@server:xxxxx@h/d", "pw"},        // a user with an @
		{"postgres://u:pa?ss@h/d", "postgres://u:xxxxx@h/d", "pa?ss"},                      // a ? not escaped
		{"postgres://u:pa#ss@h/d", "postgres://u:xxxxx@h/d", "pa#ss"},                      // a # not escaped
		{"postgres://u:pa/ss@h/d", "postgres://u:xxxxx@h/d", "pa/ss"},                      // a / not escaped
		{"postgres://u:two words@h/d", "postgres://u:xxxxx@h/d", "words"},                  // a space
		{"postgres://u:pw@h/d?password=qw", "postgres://u:xxxxx@h/d?password=xxxxx", "qw"}, // both
		{"postgres://u@h/d?dbname=host%3Dh%20password%3Dpw", "postgres://u@h/d?dbname=xxxxx", "pw"},
		{"postgres://u@h/d?sslmode=verify", "postgres://u@h/d?sslmode=verify", ""},
		{"postgres://h:5432/d", "postgres://h:5432/d", ""},
		// pgx reads a URL with libpq's parser: no fragment, so a # is
		// part of a value.
		{"postgres://u@h/d?password=se#cret", "postgres://u@h/d?password=xxxxx", "cret"},
		{"postgres://u@h/d?password=se#cret&sslmode=disable", "postgres://u@h/d?password=xxxxx&sslmode=disable", "cret"},
		// The client key's password and the other secrets.
		{"postgres://u@h/d?sslpassword=keypw&sslmode=require", "postgres://u@h/d?sslpassword=xxxxx&sslmode=require", "keypw"},
		{"postgres://u@h/d?oauth_client_secret=oauthpw", "postgres://u@h/d?oauth_client_secret=xxxxx", "oauthpw"},
		// An @ or a / not escaped in the password: pgx takes what follows
		// the / for the database, or what follows the first @ for the host.
		{"postgres://agentmap:1234/abcd@127.0.0.1:1/db", "postgres://agentmap:xxxxx@127.0.0.1:1/db", "abcd"},
		{"postgres://u:/x@h/db", "postgres://u:xxxxx@h/db", "/x@"},
		{"postgres://agentmap:pa@ss@127.0.0.1:1/db", "postgres://agentmap:xxxxx@127.0.0.1:1/db", "ss@"},
		{"postgres://u:a@b/c@h/d?password=z&x=1", "postgres://u:xxxxx@h/d?password=xxxxx&xxxxx", "b/c"},
		// A parameter that is not a keyword, key and value: pgx sends it to
		// the server, whose refusal quotes it.
		{"postgres://u@h/d?foo=bar&sslmode=require", "postgres://u@h/d?xxxxx&sslmode=require", "foo"},
		{"host=127.0.0.1 user=u dbname=postgres postgres://u:SECRETPW@h/db?sslmode=disable", "host=127.0.0.1 user=u dbname=postgres xxxxx", "SECRETPW"},
		{" postgres://u:SECRETPW@h/db?sslmode=disable", " xxxxx", "SECRETPW"},
		{" postgres://u:SECRETPW@h/db", " xxxxx", "SECRETPW"},
		{"mysql://u:pw@h/d", "xxxxx", "pw"}, // neither a postgres:// URL nor key=value pairs
		{"host=h work_mem=pw", "host=h xxxxx", "pw"},
		{"host=h password=pw user=u", "host=h password=xxxxx user=u", "pw"},
		{"host=127.0.0.1 port=55432 user=o password = ownerpw dbname=agentmap", "host=127.0.0.1 port=55432 user=o password = xxxxx dbname=agentmap", "ownerpw"},
		{"host=h password= pw", "host=h password= xxxxx", "pw"},
		{"host=h password =pw", "host=h password =xxxxx", "pw"},
		{"password='owner pw' host=h", "password=xxxxx host=h", "owner"},
		{"host=h password='it\\'s \\\\ mine' user=u", "host=h password=xxxxx user=u", "mine"},
		{"host=h password=a\\ b user=u", "host=h password=xxxxx user=u", " b"},
		{"host=h\tpassword\t=\tpw\nuser=u", "host=h\tpassword\t=\txxxxx\nuser=u", "pw"},
		{"host=h PASSWORD=pw", "host=h xxxxx", "pw"},
		{"host=h sslpassword=keypw sslkey=/k", "host=h sslpassword=xxxxx sslkey=/k", "keypw"},
		{"host=h sslpassword='key pw'", "host=h sslpassword=xxxxx", "key pw"},
		{"host=h password='never closed", "host=h password=xxxxx", "closed"},
		{"host=h pass word=pw", "host=h xxxxx", "pw"}, // does not parse: masked from there
		{"dbname='host=h password=pw' user=u", "dbname=xxxxx user=u", "pw"},
		{"host=h dbname=agentmap user=u", "host=h dbname=agentmap user=u", ""},
		{"host=h password=", "host=h password=", ""},
		{"", "", ""},
	} {
		got := MaskPassword(c.in)
		if got != c.want {
			t.Errorf("MaskPassword(%q) = %q, want %q", c.in, got, c.want)
		}
		if c.secret != "" && strings.Contains(got, c.secret) {
			t.Errorf("MaskPassword(%q) shows %q", c.in, c.secret)
		}
	}
	// HasPassword: whether the string sets the login password (password_env
	// is not added then).
	for in, want := range map[string]bool{
		"postgres://u:pw@h/d":                true,
		"postgres://u:@h/d":                  false,
		"postgres://u@h/d?password=pw":       true,
		"postgres://u@h/d?pass%77ord=pw":     true,
		"postgres://u:pa@ss@h/d":             true,
		"postgres://u@h/d?sslpassword=keypw": false,
		"host=h password = pw":               true,
		"host=h password=''":                 false,
		"host=h sslpassword=keypw":           false,
		"host=h dbname=d":                    false,
	} {
		if got := HasPassword(in); got != want {
			t.Errorf("HasPassword(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestConnTarget: a heading names the database, hosts, ports and user, and
// nothing else of the string.
func TestConnTarget(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://reader:pw@db.example.com:5432/agentmap?sslmode=verify-full": "agentmap on db.example.com:5432 as reader",
		"postgres://u:pw@h1:5432,h2:5433/d":                                     "d on h1:5432,h2:5433 as u",
		"postgres://db.example.com/agentmap":                                    "agentmap on db.example.com",
		"postgres://%5B::1%5D/d":                                                "",
		"postgres://u@[::1]:5432/d?password=pw":                                 "d on [::1]:5432 as u",
		"postgres:///d?host=/run/postgresql&user=r":                             "d on /run/postgresql as r",
		"host=127.0.0.1 port=55432 user=o password = ownerpw dbname=agentmap":   "agentmap on 127.0.0.1:55432 as o",
		"host=h1,h2 port=5432 dbname='a b'":                                     "a b on h1:5432,h2:5432",
		"dbname='host=h password=pw'":                                           "",
		"host=h pass word=pw":                                                   "",
		// Strings pgx would misread name nothing: their parts can hold
		// pieces of the password.
		"postgres://u:p@ss@h/d":                         "",
		"postgres://agentmap:1234/abcd@127.0.0.1:1/db":  "",
		"postgres://u:/x@h/db":                          "",
		" postgres://u:pw@h/db":                         "",
		"host=h user=u postgres://u:pw@h2/db?sslmode=x": "",
		"host=h user=u work_mem=x":                      "",
		// As pgx reads a URL: several hosts, a user with an escaped @, the
		// query's host over the body's.
		"postgres://u%40srv:pw@h1,h2:5433/d":          "d on h1,h2:5433 as u@srv",
		"postgres://u@h/d?host=h9&port=6000&dbname=x": "x on h9:6000 as u",
		"postgresql://h/d?ssl=true":                   "d on h",
	} {
		if got := ConnTarget(in); got != want {
			t.Errorf("ConnTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

// An inline URL is trimmed as url_file's is: a multi-line TOML string ends
// with its newline, and a space before postgres:// would make pgx read it
// as key=value pairs.
func TestSinkURLTrimmed(t *testing.T) {
	c, err := parse("c.toml", "[sink.postgres]\nurl = \"\"\"\n postgres://u@h/db?sslmode=require\n\"\"\"\n", linux(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Sink.Postgres.SinkURL(); err != nil || got != "postgres://u@h/db?sslmode=require" {
		t.Fatalf("SinkURL = %q, %v", got, err)
	}
}
