// Command benchsink measures the team sink against a real PostgreSQL server
// started in a temporary directory (pgtest): N simulated devices, each with
// its own state database, outbox and map store, push their sessions at
// once through the daemon's own sender; then every device flushes new
// versions at a steady rate; then the team report's queries run over the
// result. A single device pushing alone is the peer the throughput is
// compared with. Run through scripts/bench-sink.sh.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/report"
	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
	"github.com/agentmap/agentmap/state"
)

var (
	devices    = flag.Int("devices", 100, "simulated devices")
	sessions   = flag.Int("sessions", 1000, "sessions per device")
	live       = flag.Int("live", 50, "new versions each device flushes in the steady phase")
	rate       = flag.Float64("rate", 5, "flushes per second per device in the steady phase")
	batch      = flag.Int("batch", postgres.DefaultBatch, "sessions per transaction")
	repos      = flag.Int("repos", 20, "distinct repositories")
	cpuProfile = flag.String("cpuprofile", "", "write a CPU profile of the run")
)

// templates are the builder's golden maps, varied per session.
var templates = []string{"claude_session", "codex_session", "cursor_transcript"}

type device struct {
	dir    string
	db     *state.DB
	sender *postgres.Sender
	n      int // sessions flushed so far (for new versions)
}

// latencies collects flush→committed times. A session flushed before
// from (the backfill, queued while the stores were written) counts from
// then: the time its device took to deliver it once the senders ran.
type latencies struct {
	mu   sync.Mutex
	from time.Time
	d    []time.Duration
}

func (l *latencies) committed(qs []state.Queued, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range qs {
		flushed := time.UnixMilli(q.FlushedMs)
		if flushed.Before(l.from) {
			flushed = l.from
		}
		l.d = append(l.d, at.Sub(flushed))
	}
}

// loadWatch samples the load average every few seconds: the machine is
// shared, and the figures are read against the load they ran under.
type loadWatch struct {
	mu  sync.Mutex
	max float64
}

func (w *loadWatch) run(ctx context.Context) {
	for {
		if b, err := os.ReadFile("/proc/loadavg"); err == nil {
			var one float64
			if _, err := fmt.Sscanf(string(b), "%f", &one); err == nil {
				w.mu.Lock()
				w.max = max(w.max, one)
				w.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

func (w *loadWatch) peak() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max
}

func (l *latencies) pct(p float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l.d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		must(err)
		must(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	srv, err := pgtest.Launch()
	if err != nil {
		log.Fatalf("no PostgreSQL server: %v", err)
	}
	cleanups = append(cleanups, srv.Remove)
	defer srv.Remove()
	work, err := os.MkdirTemp("", "benchsink-")
	must(err)
	cleanups = append(cleanups, func() { os.RemoveAll(work) })
	defer os.RemoveAll(work)
	trees := loadTemplates()
	ctx := context.Background()
	var load loadWatch
	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	go load.run(lctx)

	// The peer: one device alone, into a database of its own.
	fmt.Printf("team sink load: %d devices x %d sessions, batch %d, PostgreSQL on this machine (%s)\n",
		*devices, *sessions, *batch, time.Now().UTC().Format(time.RFC3339))
	peerURL := newDatabase(srv, "peer")
	peer := newDevice(filepath.Join(work, "peer"), peerURL, 0, nil)
	flushAll(peer, trees, 0, *sessions)
	t0 := time.Now()
	drain(ctx, peer, new(atomic.Int64))
	peerRate := float64(*sessions) / time.Since(t0).Seconds()
	fmt.Printf("peer, 1 device:            %7.0f sessions/s\n", peerRate)

	// Backfill: every device has its sessions queued and sends at once.
	url := newDatabase(srv, "team")
	var backfill, steady latencies
	devs := make([]*device, *devices)
	for i := range devs {
		devs[i] = newDevice(filepath.Join(work, fmt.Sprintf("d%03d", i)), url, i, &backfill)
	}
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range jobs {
				flushAll(devs[i], trees, i, *sessions)
			}
		})
	}
	for i := range devs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	t0 = time.Now()
	backfill.from = t0
	var retries atomic.Int64
	for _, d := range devs {
		wg.Go(func() { drain(ctx, d, &retries) })
	}
	wg.Wait()
	wall := time.Since(t0)
	total := *devices * *sessions
	aggRate := float64(total) / wall.Seconds()
	fmt.Printf("backfill, %d devices:      %7.0f sessions/s (%d sessions in %s; %.1fx the single device)\n",
		*devices, aggRate, total, wall.Round(time.Millisecond), aggRate/peerRate)
	fmt.Printf("  queued->committed (all queued when the senders start): p50 %s, p95 %s; %d attempts failed and were retried\n",
		backfill.pct(0.5).Round(time.Millisecond), backfill.pct(0.95).Round(time.Millisecond), retries.Load())

	// Steady: each device's daemon loop flushes new versions at a rate.
	for _, d := range devs {
		d.sender.Close()
	}
	rctx, stop := context.WithCancel(ctx)
	for i, d := range devs {
		s, err := postgres.NewSender(d.db.Outbox(postgres.Name), filepath.Join(d.dir, "maps"), senderConfig(url, i, &steady), nil)
		must(err)
		d.sender = s
		go s.Run(rctx)
	}
	t0 = time.Now()
	every := time.Duration(float64(time.Second) / *rate)
	for _, d := range devs {
		wg.Go(func() {
			for k := range *live {
				time.Sleep(every)
				flushVersion(d, trees, k)
				d.sender.Notify()
			}
		})
	}
	wg.Wait()
	flushed := time.Since(t0)
	for _, d := range devs {
		for {
			st, err := d.db.Outbox(postgres.Name).Stats()
			must(err)
			if st.Len == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	stop()
	// The rate asked for is an upper bound: each flush is a state
	// transaction with its fsync, as in the daemon, and a busy disk slows
	// it; the rate reached is what the latencies were measured under.
	fmt.Printf("steady, %d devices asked for %.0f flushes/s each: %d new versions flushed in %s (%.0f flushes/s in all), all committed after %s\n",
		*devices, *rate, *devices**live, flushed.Round(time.Millisecond), float64(*devices**live)/flushed.Seconds(),
		time.Since(t0).Round(time.Millisecond))
	fmt.Printf("  flush->committed: p50 %s, p95 %s, max %s\n",
		steady.pct(0.5).Round(time.Millisecond), steady.pct(0.95).Round(time.Millisecond), steady.pct(1).Round(time.Millisecond))

	// The team report's queries over every session.
	pool, err := postgres.Open(ctx, url)
	must(err)
	defer pool.Close()
	var n, events int64
	must(pool.QueryRow(ctx, "SELECT count(*), (SELECT count(*) FROM agentmap.events) FROM agentmap.sessions").Scan(&n, &events))
	fmt.Printf("queries over %d sessions (%d events), best of 3:\n", n, events)
	for _, q := range []struct{ name, sql string }{
		{"cost per repo per week", "SELECT * FROM agentmap.cost_per_repo_week"},
		{"failing verbs", "SELECT * FROM agentmap.failing_verbs ORDER BY failures DESC"},
		{"MCP failure rates", "SELECT * FROM agentmap.mcp_failure_rates"},
		{"outcomes per agent", "SELECT * FROM agentmap.outcomes_per_agent"},
		{"one repo's cost, last 30 days", "SELECT sum(cost_usd) FROM agentmap.sessions WHERE repo = 'repo-07' AND started_at >= now() - interval '30 days'"},
	} {
		fmt.Printf("  %-34s %s\n", q.name, best(func() { query(ctx, pool, q.sql) }))
	}
	for _, c := range []struct {
		name string
		f    postgres.Filter
	}{
		{"report/usage --from (every map)", postgres.Filter{}},
		{"report/usage --from --repo repo-07", postgres.Filter{Repos: []string{"repo-07"}}},
		{"report/usage --from --device d007", postgres.Filter{Devices: []string{"d007"}}},
	} {
		var maps int
		d := best(func() {
			var ms []*report.Map
			must(postgres.ReadPool(ctx, pool, c.f, func(s postgres.Stored) error {
				m, err := report.Decode(bytes.NewReader(s.Map))
				ms = append(ms, m)
				return err
			}))
			report.Usage(ms, report.Weekly, time.UTC)
			maps = len(ms)
		})
		fmt.Printf("  %-34s %s (%d maps read, decoded and tabled)\n", c.name, d, maps)
	}
	fmt.Printf("highest 1-minute load average seen during the run: %.2f\n", load.peak())
}

// drain sends a device's queue, retrying a failed attempt after a second
// as the daemon's sender does (with back-off) when, say, a hundred devices
// authenticating at once make one of them time out.
func drain(ctx context.Context, d *device, retries *atomic.Int64) {
	for try := 0; ; try++ {
		err := d.sender.Drain(ctx)
		if err == nil {
			return
		}
		if try == 20 {
			must(err)
		}
		retries.Add(1)
		time.Sleep(time.Second)
	}
}

// cleanups run before a fatal error exits, which skips the deferred ones:
// no server or temporary directory is left behind.
var cleanups []func()

func must(err error) {
	if err != nil {
		for _, c := range cleanups {
			c()
		}
		log.Fatal(err)
	}
}

func best(f func()) time.Duration {
	var b time.Duration
	for i := range 3 {
		t := time.Now()
		f()
		if d := time.Since(t); i == 0 || d < b {
			b = d
		}
	}
	return b.Round(time.Millisecond)
}

func query(ctx context.Context, pool *pgxpool.Pool, sql string) {
	rows, err := pool.Query(ctx, sql)
	must(err)
	for rows.Next() {
	}
	must(rows.Err())
	rows.Close()
}

func newDatabase(srv *pgtest.Server, name string) string {
	if out, err := srv.Psql("postgres", "CREATE DATABASE "+name); err != nil {
		must(fmt.Errorf("create database: %v %s", err, out))
	}
	return srv.AdminURL(name)
}

func newDevice(dir, url string, i int, lat *latencies) *device {
	db, err := state.Open(filepath.Join(dir, "state.db"), nil)
	must(err)
	s, err := postgres.NewSender(db.Outbox(postgres.Name), filepath.Join(dir, "maps"), senderConfig(url, i, lat), nil)
	must(err)
	return &device{dir: dir, db: db, sender: s}
}

func senderConfig(url string, i int, lat *latencies) postgres.Config {
	cfg := postgres.Config{URL: url, Label: fmt.Sprintf("d%03d", i), Producer: "benchsink", Batch: *batch, Every: time.Second}
	if lat != nil {
		cfg.Committed = lat.committed
	}
	return cfg
}

func loadTemplates() []map[string]any {
	var out []map[string]any
	for _, name := range templates {
		raw, err := os.ReadFile(filepath.Join("testdata", "builder", name+".map.json"))
		must(err)
		var tree map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		must(dec.Decode(&tree))
		out = append(out, tree)
	}
	return out
}

// session writes session k of device dev (version v) into its store and
// returns its flush record.
func session(d *device, trees []map[string]any, dev, k, v int) *state.Session {
	base := trees[k%len(trees)]
	tree := make(map[string]any, len(base))
	for key, val := range base {
		tree[key] = val
	}
	sess := map[string]any{}
	for key, val := range base["session"].(map[string]any) {
		sess[key] = val
	}
	native := fmt.Sprintf("%08x-0000-4000-8000-%012x", dev, k)
	sess["id"] = "local:" + sess["agentTool"].(string) + ":" + native
	start := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(k%84) * 24 * time.Hour).Add(time.Duration(dev) * time.Minute)
	sess["startedAt"] = start.Format(time.RFC3339Nano)
	sess["durationMs"] = json.Number(fmt.Sprint(60000 + 1000*v))
	tree["session"] = sess
	if rs, ok := base["repos"].([]any); ok && len(rs) > 0 {
		r0 := map[string]any{}
		for key, val := range rs[0].(map[string]any) {
			r0[key] = val
		}
		r0["name"] = fmt.Sprintf("repo-%02d", (k+dev)%*repos)
		tree["repos"] = append([]any{r0}, rs[1:]...)
	}
	hash, err := builder.ContentHash(tree)
	must(err)
	tree["contentHash"] = hash
	canon, err := builder.CanonicalJSON(tree)
	must(err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(canon)
	zw.Close()
	rel := fmt.Sprintf("%s/%02d/%s.json.gz", sess["agentTool"], k%100, fmt.Sprintf("%08x-%012x", dev, k))
	p := filepath.Join(d.dir, "maps", filepath.FromSlash(rel))
	must(os.MkdirAll(filepath.Dir(p), 0o700))
	must(os.WriteFile(p, gz.Bytes(), 0o600))
	sum := sha256.Sum256(gz.Bytes())
	key := fmt.Sprintf("bench/%d", k)
	return &state.Session{Key: key, Agent: "bench", NativeID: key, Gen: uint64(v + 1),
		Flush: &state.Flush{Path: rel, SHA256: hex.EncodeToString(sum[:]), Gen: uint64(v + 1), AtMs: time.Now().UnixMilli()}}
}

// flushAll writes sessions [0, n) of a device and records their flushes in
// batches, as the daemon does (the outbox entries in the same transactions).
func flushAll(d *device, trees []map[string]any, dev, n int) {
	var ss []*state.Session
	for k := range n {
		ss = append(ss, session(d, trees, dev, k, 0))
		if len(ss) == 100 || k == n-1 {
			must(d.db.PutSessions(ss...))
			ss = ss[:0]
		}
	}
	d.n = n
}

// flushVersion writes a new version of one of the device's sessions.
func flushVersion(d *device, trees []map[string]any, v int) {
	k := (v * 7919) % d.n
	must(d.db.PutSessions(session(d, trees, devIndex(d), k, v+1)))
}

func devIndex(d *device) int {
	var i int
	fmt.Sscanf(filepath.Base(d.dir), "d%03d", &i)
	return i
}
