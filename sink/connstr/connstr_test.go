package connstr

import (
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestReadsAsPgxDoes: what Check accepts, pgx parses, and Params names the
// user, database, host and port pgx connects with.
func TestReadsAsPgxDoes(t *testing.T) {
	for _, s := range []string{
		"postgres://agentmap_sink@db.example.com:5432/agentmap?sslmode=verify-full",
		"postgresql://u:p%40ss%2Fw%3F%23@h1:5432,h2:5433/agentmap?application_name=laptop&ssl=true",
		"postgres://u:pa?ss#x@h/d",
		"postgres://u%40srv:pw@[::1]:6000/d",
		"postgres://h/d?host=h9&port=6000&dbname=x&user=r",
		"postgres:///agentmap?host=/run/postgresql",
		"postgres://h/d?password=se#cret",
		"host=db port=5432 user=o dbname=agentmap sslmode=require",
		"host=db user=o password='a b' application_name=x dbname = 'my db'",
		"host=h1,h2 port=5432 user=u dbname=d",
	} {
		if err := Check(s); err != nil {
			t.Errorf("Check(%q): %v", s, err)
			continue
		}
		pc, err := pgconn.ParseConfig(s)
		if err != nil {
			t.Errorf("pgx does not parse %q: %v", s, err)
			continue
		}
		get := func(key string) string {
			v := ""
			for _, p := range Params(s) {
				if p.Key == key {
					v = p.Value
				}
			}
			return v
		}
		host, _, _ := strings.Cut(get("host"), ",")
		port, _, _ := strings.Cut(get("port"), ",")
		if port == "" {
			port = strconv.Itoa(int(pc.Port))
		}
		user := get("user")
		if user == "" {
			user = pc.User // the environment's
		}
		if user != pc.User || get("dbname") != pc.Database || host != pc.Host || port != strconv.Itoa(int(pc.Port)) ||
			get("password") != pc.Password {
			t.Errorf("%q: read as user %q db %q host %q port %q password %q; pgx: %q %q %q %d %q", s,
				get("user"), get("dbname"), host, port, get("password"), pc.User, pc.Database, pc.Host, pc.Port, pc.Password)
		}
	}
}

// TestCheckRefusesWhatPgxMisreads: each refusal quotes nothing of the
// string.
func TestCheckRefusesWhatPgxMisreads(t *testing.T) {
	for s, want := range map[string]error{
		" postgres://u:SECRET@h/db":  ErrSpace,
		"postgres://u:SECRET@h/db\n": ErrSpace,
		"host=h user=u dbname=postgres postgres://u:SECRET@h/db?sslmode=disable": ErrKeyword,
		"host=h SECRET=x":                                               ErrKeyword,
		"host=h PASSWORD=SECRET":                                        ErrKeyword,
		"host=h pass SECRET=x":                                          ErrKeyValue,
		"mysql://u:SECRET@h/db":                                         ErrKeyValue,
		"postgres://u@h/db?SECRET=x":                                    ErrQueryKey,
		"postgres://u@h/db?work_mem=SECRET":                             ErrQueryKey,
		"postgres://u:SEC@RET@h/db":                                     ErrAt,
		"postgres://u:SEC/RET@h/db":                                     ErrAt,
		"postgres://agentmap:1234/SECRET@127.0.0.1:1/db":                ErrAt,
		"postgres://u:/SECRET@h/db":                                     ErrAt,
		"host=db user=upassword=SECRET dbname=d":                        ErrJoined,
		"host=dbpassword=SECRET":                                        ErrJoined,
		"user='u password=SECRET' host=h":                               ErrJoined,
		"postgres://h/db?user=u%3Dpassword%3DSECRET":                    ErrJoined,
		"host=db\u00a0password=SECRET":                                  ErrWideSpace,
		"postgres://u:SEC RET@h/db":                                     ErrURL,
		"postgres://u:SEC%zzRET@h/db":                                   ErrURL,
		"postgres://u@h:SECRET/db":                                      ErrURL,
		"postgres://u@h/db?SECRET":                                      ErrURL,
		"dbname='host=h password=SECRET'":                               ErrDBName,
		"postgres://u@h/db?dbname=postgres%3A%2F%2Fu%3ASECRET%40h%2Fdb": ErrDBName,
	} {
		err := Check(s)
		if err != want {
			t.Errorf("Check(%q) = %v, want %v", s, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("Check(%q) quotes it: %v", s, err)
		}
		if Target(s) != "" {
			t.Errorf("Target(%q) = %q, want nothing for a string pgx misreads", s, Target(s))
		}
	}
}

// FuzzMaskHidesWhatPgxReads: for any string pgx parses, Mask shows neither
// the password pgx reads nor a run-time parameter it would send that is
// not a connection keyword, and Target shows no password.
func FuzzMaskHidesWhatPgxReads(f *testing.F) {
	for _, s := range []string{
		"postgres://u:pw1234@h/d", "postgres://agentmap:1234/abcd@127.0.0.1:1/db", "postgres://u:/x123@h/db",
		"postgres://agentmap:pa@ss@127.0.0.1:1/db", "postgres://u@h/d?password=se#cret", "postgres://u:pa?ss#x@h/d",
		"host=127.0.0.1 user=u dbname=postgres postgres://u:SECRETPW@h/db?sslmode=disable",
		" postgres://u:SECRETPW@h/db?sslmode=disable", "host=h password='a b c' user=u", "host=h work_mem=SECRETPW",
		"postgres://u@h/d?foo=barbaz", "postgres://u:p%40ss@h1,h2:5/d?password=abc%26d&x=yyy",
		"host=h password=abc\\ def", "postgres://u:@h/d?password=qwerty",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pc, err := pgconn.ParseConfig(s)
		if err != nil {
			return
		}
		m := Mask(s)
		// Each occurrence of a secret is masked where pgx reads it: the
		// masked string holds fewer of them than the string.
		fewer := func(x string) bool { return strings.Count(m, x) < strings.Count(s, x) }
		if len(pc.Password) >= 3 && strings.Contains(s, pc.Password) && !fewer(pc.Password) {
			t.Errorf("Mask(%q) = %q shows the password %q", s, m, pc.Password)
		}
		for k := range pc.RuntimeParams {
			if Keyword(k) || !strings.Contains(s, k) {
				continue // a keyword, or from the environment
			}
			if len(k) >= 3 && !fewer(k) {
				t.Errorf("Mask(%q) = %q shows the parameter %q", s, m, k)
			}
		}
		in := func(x string) bool { return strings.Contains(pc.Host+" "+pc.User+" "+pc.Database, x) }
		if tg := Target(s); len(pc.Password) >= 3 && strings.Contains(tg, pc.Password) && !in(pc.Password) {
			t.Errorf("Target(%q) = %q shows the password", s, tg)
		}
	})
}

// FuzzParamsAgreeWithPgx: a URL Check accepts, pgx parses, into the user,
// database, first host and port and password Params reads.
func FuzzParamsAgreeWithPgx(f *testing.F) {
	for _, s := range []string{
		"postgres://u:pw@h:5432/d?sslmode=disable", "postgresql://u%40x:p%2F@h1,h2:5433/d?application_name=a",
		"postgres://[::1]:5/d", "postgres:///d?host=/tmp&port=7", "postgres://u:pa?ss#x@h/d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !IsURL(s) || Check(s) != nil || strings.Contains(s, "ssl") || strings.Contains(s, "service") ||
			strings.Contains(s, "file") || strings.Contains(s, "%") && strings.Contains(s, ",") {
			return
		}
		pc, err := pgconn.ParseConfig(s)
		if err != nil {
			if strings.Contains(err.Error(), "port") || strings.Contains(err.Error(), "invalid") {
				t.Errorf("Check accepts %q, pgx does not parse it: %v", s, err)
			}
			return
		}
		get := func(key string) string {
			v := ""
			for _, p := range Params(s) {
				if p.Key == key {
					v = p.Value
				}
			}
			return v
		}
		if u := get("user"); u != "" && u != pc.User || get("dbname") != "" && get("dbname") != pc.Database || get("password") != pc.Password {
			t.Errorf("%q: user %q db %q password %q; pgx %q %q %q", s, get("user"), get("dbname"), get("password"), pc.User, pc.Database, pc.Password)
		}
	})
}

// An @ in a query value is the value's, as pgx reads it: a user name of
// Entra ID or Kerberos, an application name. The database alias of pgx is
// a keyword.
func TestCheckTakesWhatPgxReadsAsMeant(t *testing.T) {
	for s, target := range map[string]string{
		"postgres://h/db?user=alice@example.com":        "db on h as alice@example.com",
		"postgres://u@h/db?application_name=me@laptop":  "db on h as u",
		"host=h database=agentmap user=u":               "on h as u",
		"postgres://u:p%40ss@h:5432/db?sslmode=require": "db on h:5432 as u",
	} {
		if err := Check(s); err != nil {
			t.Errorf("Check(%q) = %v, want nil", s, err)
		}
		if got := Target(s); got != target {
			t.Errorf("Target(%q) = %q, want %q", s, got, target)
		}
	}
	// Masked wherever a secret's assignment is run into another value.
	if got := Mask("host=dbpassword=SECRET user=u"); strings.Contains(got, "SECRET") {
		t.Errorf("Mask of a password run into the host: %q", got)
	}
}
