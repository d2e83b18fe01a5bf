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
	for in, want := range map[string]string{
		"postgres://u:pw@h/d":             "postgres://u:xxxxx@h/d",
		"postgres://u@h/d?password=pw":    "postgres://u@h/d?password=xxxxx",
		"host=h password=pw user=u":       "host=h password=xxxxx user=u",
		"postgres://u@h/d?sslmode=verify": "postgres://u@h/d?sslmode=verify",
	} {
		if got := MaskPassword(in); got != want {
			t.Errorf("MaskPassword(%q) = %q, want %q", in, got, want)
		}
	}
}
