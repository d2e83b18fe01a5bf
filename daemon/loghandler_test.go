package daemon

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// The attributes of Logger.With are handed down only when a record is
// logged: the lines must read as if they had been handed down at once,
// and the last error must still name its component.
func TestTrapHandlerHandsDownWithAttributesWhenLogging(t *testing.T) {
	var out bytes.Buffer
	trap := &errTrap{}
	base := slog.New(trapHandler{Handler: slog.NewTextHandler(&out, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}), trap: trap})

	tail := base.With("component", "tail", "agent", "claude")
	a := tail.With("path", "/logs/a.jsonl")
	b := tail.With("path", "/logs/b.jsonl")
	a.Info("not shown")
	a.Warn("line too long", "bytes", 9)
	b.Warn("cannot read")
	tail.WithGroup("g").With("k", 1).Warn("grouped", "v", 2)
	base.With("component", "flush").With("session", "s1").Error("cannot write the map")

	want := []string{
		`level=WARN msg="line too long" component=tail agent=claude path=/logs/a.jsonl bytes=9`,
		`level=WARN msg="cannot read" component=tail agent=claude path=/logs/b.jsonl`,
		`level=WARN msg=grouped component=tail agent=claude g.k=1 g.v=2`,
		`level=ERROR msg="cannot write the map" component=flush session=s1`,
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if e := trap.get(); e == nil || e.Component != "flush" || e.Message != "cannot write the map" {
		t.Fatalf("last error %+v, want the flush's", e)
	}
}
