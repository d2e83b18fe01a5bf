package pgtest

import (
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestServerStartsStopsAndRestarts(t *testing.T) {
	s := New(t)
	out, err := s.Psql("postgres", "SELECT 1+1")
	if err != nil || out != "2" {
		t.Fatalf("psql: %q, %v", out, err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Psql("postgres", "SELECT 1"); err == nil {
		t.Fatal("a stopped server answered")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := s.Psql("postgres", "SHOW port"); err != nil || out != strconv.Itoa(s.Port) {
		t.Fatalf("after restart: %q, %v", out, err)
	}
}

func TestSharedDatabasesAreSeparate(t *testing.T) {
	s := Shared(t)
	a, b := Database(s.NewDatabase(t)), Database(s.NewDatabase(t))
	if a == b {
		t.Fatal("two tests got the same database")
	}
	if _, err := s.Psql(a, "CREATE TABLE x (n int); INSERT INTO x VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	if out, err := s.Psql(b, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'"); err != nil || out != "0" {
		t.Fatalf("table leaked across databases: %q, %v", out, err)
	}
	dump, err := s.Dump(a)
	if err != nil || !strings.Contains(string(dump), "7") {
		t.Fatalf("dump: %v", err)
	}
}
