package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// BenchmarkPush stores batches of 200 new sessions (the builder's golden
// maps under fresh ids) in one transaction each; b.N counts sessions.
func BenchmarkPush(b *testing.B) {
	srv := pgtest.Shared(b)
	url := srv.NewDatabase(b)
	ctx := context.Background()
	pool, err := Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if err := Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	var docs []*mapfile.Doc
	for _, f := range fixtures {
		docs = append(docs, mustFixture(b, f))
	}
	dev := Device{ID: "7b6f3a4e-9999-4222-8333-444455556666"}
	const batch = 200
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		var ups []Upload
		for k := i; k < min(i+batch, b.N); k++ {
			d := *docs[k%len(docs)]
			m := *d.Map
			m.Session.ID = fmt.Sprintf("local:bench:%d", k)
			d.Map = &m
			ups = append(ups, Upload{Doc: &d, FlushedAt: time.Now()})
		}
		if _, err := Push(ctx, pool, dev, ups); err != nil {
			b.Fatal(err)
		}
	}
}
