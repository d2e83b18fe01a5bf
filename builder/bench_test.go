package builder

import (
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// syntheticSession is a long, regular session: a user turn every 200
// records, requests split over two lines, calls with results, two lanes.
func syntheticSession(n int) []event.Event {
	evs := make([]event.Event, 0, n+2)
	evs = append(evs, sess("bench"), repoEv(0, "k", "api", "acme/api"))
	t := 0.0
	for i := 0; len(evs) < n; i++ {
		t += 0.7
		lane := ""
		if i%10 >= 8 {
			lane = "sa-" + itoa(i%10)
		}
		id := "c" + itoa(i)
		msg := "m" + itoa(i)
		var rec []event.Event
		if i%40 == 0 {
			rec = append(rec, userEv(t, 120))
		}
		rec = append(rec,
			llmEv(t, msg, "claude-sonnet-4-5", 10, 1, 0, 0),
			llmEv(t, msg, "claude-sonnet-4-5", 10, 200, 1, 50),
			callEv(t, id, "Read", "read", file("k", "src/f"+itoa(i%500)+".go", "read", "")),
			resultEv(t+0.3, id, i%17 == 0))
		for _, e := range rec {
			e.Agent = lane
			evs = append(evs, e)
		}
	}
	return evs
}

// BenchmarkBuild reports input events per second for a 100k-record session,
// with the default cap and with no effective cap, map encoding included.
func BenchmarkBuild(b *testing.B) {
	evs := syntheticSession(100_000)
	for _, bc := range []struct {
		name string
		cap  int
	}{{"cap20k", 0}, {"uncapped", 1 << 30}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, err := Build(evs, Options{EventCap: bc.cap})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Gzip(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func BenchmarkCanonical(b *testing.B) {
	m, err := Build(syntheticSession(100_000), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Canonical(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGzip measures the compression of one large map (MB/s of
// canonical JSON) and reports the compressed share.
func BenchmarkGzip(b *testing.B) {
	m, err := Build(syntheticSession(20_000), Options{})
	if err != nil {
		b.Fatal(err)
	}
	canon, err := m.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(canon)))
	b.ReportAllocs()
	var gz []byte
	for b.Loop() {
		if gz, err = m.Gzip(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(100*float64(len(gz))/float64(len(canon)), "%size")
}
