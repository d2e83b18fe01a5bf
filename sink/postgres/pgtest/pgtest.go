// Package pgtest starts real PostgreSQL servers for tests: initdb and pg_ctl
// from the Debian postgresql package (or PATH) in a temporary directory, on
// a random local port, as an unprivileged user. initdb refuses to run as
// root, so under root the server runs as the postgres system user (or
// nobody). Where no server can be started the test is skipped with the
// reason; nothing outside the temporary directory is touched.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Admin is the superuser initdb creates.
const Admin = "agentmap_admin"

// Server is one running (or stopped) PostgreSQL cluster.
type Server struct {
	bin      string
	dir      string // owned by the server's user, 0700
	data     string
	Port     int
	password string
	cred     *credential
	mu       sync.Mutex
	running  bool
}

var (
	shared    *Server
	sharedErr error
	sharedMu  sync.Mutex
)

// Shared returns the package's server, started on first use and stopped by
// Main. Tests use a database of their own on it (NewDatabase).
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = start()
	}
	if sharedErr != nil {
		t.Skipf("no PostgreSQL server for this test: %v", sharedErr)
	}
	return shared
}

// Main runs the tests of a package and stops its shared server after them.
func Main(m interface{ Run() int }) {
	code := m.Run()
	sharedMu.Lock()
	if shared != nil {
		shared.Remove()
	}
	sharedMu.Unlock()
	os.Exit(code)
}

// New starts a server of the test's own (for tests that stop and start
// it), removed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		t.Skipf("no PostgreSQL server for this test: %v", err)
	}
	t.Cleanup(s.Remove)
	return s
}

// binDir finds initdb: the newest /usr/lib/postgresql/<v>/bin, else PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("initdb not found (install the postgresql package)")
}

// serverUser is who runs the server: the current user, or under root the
// postgres system user (nobody without one).
func serverUser() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if uid == 0 {
			continue
		}
		return &credential{uid: uid, gid: gid}, nil
	}
	return nil, errors.New("running as root and no unprivileged user (postgres, nobody) to run initdb as")
}

// Launch starts a server outside a test (a benchmark script); the caller
// removes it.
func Launch() (*Server, error) { return start() }

func start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	// Not under t.TempDir: its parents are 0700 and root's, out of reach
	// of the server's user. /tmp is traversable by everyone.
	dir, err := os.MkdirTemp("", "agentmap-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, data: filepath.Join(dir, "data"), cred: cred}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, cred.uid, cred.gid); err != nil {
			return fail(fmt.Errorf("chown %s: %w", dir, err))
		}
	}
	s.password = randomHex(12)
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(s.password+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if cred != nil {
		os.Chown(pwfile, cred.uid, cred.gid)
	}
	// Local socket connections are trusted (only the server's user can
	// reach the socket directory); TCP ones need the password, so the
	// tests exercise password handling as a team's server would.
	if out, err := s.run("initdb", "-D", s.data, "-U", Admin, "--pwfile", pwfile, "-E", "UTF8",
		"--locale", "C", "--auth-local", "trust", "--auth-host", "scram-sha-256", "--no-sync"); err != nil {
		return fail(fmt.Errorf("initdb: %v: %s", err, lastLines(out)))
	}
	os.Remove(pwfile)
	for try := 0; ; try++ {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		s.Port = port
		if err := s.Start(); err == nil {
			return s, nil
		} else if try == 4 {
			return fail(err)
		}
	}
}

// Start starts the (stopped) server on its port and waits until it accepts
// connections.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return nil
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300 -c shared_buffers=64MB",
		s.Port, s.dir)
	out, err := s.run("pg_ctl", "-D", s.data, "-l", filepath.Join(s.dir, "log"), "-o", opts, "-w", "-t", "60", "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, lastLines(out), lastLines(log))
	}
	s.running = true
	return nil
}

// Stop stops the server at once (immediate mode: connections are cut as
// by a crash or a network loss).
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return nil
	}
	out, err := s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, lastLines(out))
	}
	s.running = false
	return nil
}

// Remove stops the server and deletes its directory.
func (s *Server) Remove() {
	s.Stop()
	os.RemoveAll(s.dir)
}

// URL is the connection URL of a database as role (with its password).
func (s *Server) URL(role, password, database string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(role, password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), Path: "/" + database}
	u.RawQuery = "sslmode=disable"
	return u.String()
}

// AdminURL is the superuser's URL of a database.
func (s *Server) AdminURL(database string) string { return s.URL(Admin, s.password, database) }

// NewDatabase creates an empty database for one test and returns its
// superuser URL.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "t_" + randomHex(6)
	if out, err := s.Psql("postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v: %s", err, out)
	}
	return s.AdminURL(name)
}

// Psql runs SQL on a database over the local socket and returns its
// unaligned, tuples-only output.
func (s *Server) Psql(database, sql string) (string, error) {
	out, err := s.run("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", s.dir,
		"-p", strconv.Itoa(s.Port), "-U", Admin, "-d", database, "-c", sql)
	return strings.TrimSpace(string(out)), err
}

// Script runs a psql script (psql's meta-commands such as \c allowed) on a
// database as a role, over the local socket (trusted: no password), and
// returns its unaligned, tuples-only output; it stops at the first error.
func (s *Server) Script(role, database, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", s.dir, "-p", strconv.Itoa(s.Port), "-U", role, "-d", database, "-f", "-")
	runAs(cmd, s.cred)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Dump returns pg_dump's plain SQL of a database: every row of every table.
func (s *Server) Dump(database string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "pg_dump"), "-h", s.dir, "-p", strconv.Itoa(s.Port),
		"-U", Admin, "-d", database)
	runAs(cmd, s.cred)
	cmd.Dir = s.dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("pg_dump: %v: %s", err, lastLines([]byte(stderr.String())))
	}
	return out, nil
}

// Database is the database name of a URL from NewDatabase.
func Database(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

func (s *Server) run(tool string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, tool), args...)
	runAs(cmd, s.cred)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	return cmd.CombinedOutput()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func lastLines(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// Password is the superuser's password (TCP connections need it).
func (s *Server) Password() string { return s.password }
