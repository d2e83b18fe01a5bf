package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, url := range []string{"host=db port=5432 user=o password = ownerpw dbname=agentmap", "host=db user=o password='owner pw' dbname=agentmap"} {
		c, err := parse("c.toml", "[sink.postgres]\nurl = \""+strings.ReplaceAll(url, "'", "\\u0027")+"\"\n", p)
		if err != nil {
			t.Fatal(err)
		}
		if shown := string(render(c, p, false)); strings.Contains(shown, "ownerpw") || strings.Contains(shown, " pw'") || !strings.Contains(shown, "password") {
			t.Fatalf("config show of %q:\n%s", url, shown)
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
	} {
		_, err := parse("c.toml", c.doc, p)
		found := false
		for _, pr := range Problems(err) {
			found = found || pr.Key == c.key
		}
		if !found {
			t.Errorf("%q: want a problem with %s, got %v", c.doc, c.key, err)
		}
		if err != nil && strings.Contains(err.Error(), "mysql://x") {
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
	} {
		got, err := c.s.SinkURL()
		if err != nil || got != c.want {
			t.Errorf("%+v: %q %v, want %q", c.s, got, err, c.want)
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

// TestMaskPassword: every password form libpq or pgx reads is masked, and
// the rest of the string stays as written.
func TestMaskPassword(t *testing.T) {
	for _, c := range []struct{ in, want, secret string }{
		{"postgres://u:pw@h/d", "postgres://u:xxxxx@h/d", "pw"},
		{"postgresql://u:pw@h:5432/d?sslmode=require", "postgresql://u:xxxxx@h:5432/d?sslmode=require", "pw"},
		{"postgres://u@h/d?password=pw", "postgres://u@h/d?password=xxxxx", "pw"},
		{"postgres://u@h/d?sslmode=disable&password=pw&application_name=x", "postgres://u@h/d?sslmode=disable&password=xxxxx&application_name=x", "pw"},
		{"postgres://u@h/d?PASSWORD=pw", "postgres://u@h/d?PASSWORD=xxxxx", "pw"},
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
		{"host=h password=pw user=u", "host=h password=xxxxx user=u", "pw"},
		{"host=127.0.0.1 port=55432 user=o password = ownerpw dbname=agentmap", "host=127.0.0.1 port=55432 user=o password = xxxxx dbname=agentmap", "ownerpw"},
		{"host=h password= pw", "host=h password= xxxxx", "pw"},
		{"host=h password =pw", "host=h password =xxxxx", "pw"},
		{"password='owner pw' host=h", "password=xxxxx host=h", "owner"},
		{"host=h password='it\\'s \\\\ mine' user=u", "host=h password=xxxxx user=u", "mine"},
		{"host=h password=a\\ b user=u", "host=h password=xxxxx user=u", " b"},
		{"host=h\tpassword\t=\tpw\nuser=u", "host=h\tpassword\t=\txxxxx\nuser=u", "pw"},
		{"host=h PASSWORD=pw", "host=h PASSWORD=xxxxx", "pw"},
		{"host=h password='never closed", "host=h password=xxxxx", "closed"},
		{"host=h pass word=pw", "host=h xxxxx", "pw"}, // does not parse: masked from there
		{"dbname='host=h password=pw' user=u", "dbname=xxxxx user=u", "pw"},
		{"host=h dbname=agentmap user=u", "host=h dbname=agentmap user=u", ""},
		{"", "", ""},
	} {
		got := MaskPassword(c.in)
		if got != c.want {
			t.Errorf("MaskPassword(%q) = %q, want %q", c.in, got, c.want)
		}
		if c.secret != "" && strings.Contains(got, c.secret) {
			t.Errorf("MaskPassword(%q) shows %q", c.in, c.secret)
		}
		if HasPassword(c.in) != (c.in != c.want) {
			t.Errorf("HasPassword(%q) = %v", c.in, HasPassword(c.in))
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
		"postgres://u:p@ss@h/d":                                                 "d on h as u",
	} {
		if got := ConnTarget(in); got != want {
			t.Errorf("ConnTarget(%q) = %q, want %q", in, got, want)
		}
	}
}
