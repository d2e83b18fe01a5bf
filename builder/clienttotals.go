package builder

import (
	"sort"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/prices"
)

// clientTotals adds the requests a client billed but wrote no line for.
//
// A KindClientTotal record is the client's running total for one process
// (all lanes included), per model. At each record the shortfall D is what
// the total holds beyond the session's requests (all lanes) from the
// process's start up to the record. The requests added up to record k are
// the smallest shortfall of k and every later record (never below 0): a
// request whose line was written just after a total is seen at the next
// one and adds nothing, and what remains unexplained at the last record is
// exactly what the client billed beyond the transcript. Each record whose
// share is above 0 gets one side request ("auxiliary") per model in the
// main lane, at the record's time. Requests are never taken away.
func (b *build) clientTotals() {
	byProc := map[int64][]int{}
	for i := range b.in {
		if e := &b.in[i]; e.Kind == event.KindClientTotal && e.Total != nil && e.Agent == "" {
			byProc[e.Total.Process] = append(byProc[e.Total.Process], i)
		}
	}
	if len(byProc) == 0 {
		return
	}
	procs := make([]int64, 0, len(byProc))
	for p := range byProc {
		procs = append(procs, p)
	}
	sort.Slice(procs, func(i, j int) bool { return procs[i] < procs[j] })
	var reqs []*node
	for _, l := range b.lanes {
		for _, n := range l.nodes {
			if n.ev.Kind == "llm" {
				reqs = append(reqs, n)
			}
		}
	}
	main := b.laneIdx[""]
	for _, proc := range procs {
		recs := byProc[proc]
		// shortfall[k][model] at each record, in input order.
		short := make([]map[string]tokens, len(recs))
		for k, i := range recs {
			at := b.t(i)
			seen := map[string]tokens{}
			for _, n := range reqs {
				if b.timed && (n.ev.T < proc || n.ev.T > at) {
					continue
				}
				seen[n.ev.Model] = seen[n.ev.Model].add(tokensOf(n.priced))
			}
			short[k] = map[string]tokens{}
			for _, m := range b.in[i].Total.Models {
				short[k][m.Model] = tokens{m.In, m.CW, m.CW1h, m.CR, m.Out}.minus(seen[m.Model])
			}
		}
		// The lower envelope from the right: env[k] = min over j >= k.
		env := make([]map[string]tokens, len(recs))
		for k := len(recs) - 1; k >= 0; k-- {
			env[k] = map[string]tokens{}
			for m, d := range short[k] {
				if k+1 < len(recs) {
					d = d.min(env[k+1][m])
				}
				env[k][m] = d.floor()
			}
		}
		added := map[string]tokens{}
		for k, i := range recs {
			models := make([]string, 0, len(env[k]))
			for m := range env[k] {
				models = append(models, m)
			}
			sort.Strings(models)
			for _, m := range models {
				share := env[k][m].minus(added[m]).floor()
				share[2] = min(share[2], share[1]) // the 1-hour writes are part of the writes
				if share.total() == 0 {
					continue
				}
				added[m] = added[m].add(share)
				aux := &event.LLM{In: share[0], CW: share[1], CW1h: share[2], CR: share[3], Out: share[4],
					Side: "auxiliary"}
				main.nodes = append(main.nodes, &node{idx: i, lane: main, seq: -1, side: true, priced: requestUsage(aux),
					ev: Event{Kind: "llm", T: b.t(i), Model: m, In: aux.In, CW: aux.CW, CR: aux.CR, Out: aux.Out}})
			}
		}
	}
}

// tokens is a usage split: in, cache writes, the 1-hour part of those
// writes, reads, out.
type tokens [5]int64

func tokensOf(u prices.Usage) tokens { return tokens{u.In, u.CW5m + u.CW1h, u.CW1h, u.CR, u.Out} }

func (t tokens) add(o tokens) tokens {
	for i := range t {
		t[i] += o[i]
	}
	return t
}

func (t tokens) minus(o tokens) tokens {
	for i := range t {
		t[i] -= o[i]
	}
	return t
}

func (t tokens) min(o tokens) tokens {
	for i := range t {
		t[i] = min(t[i], o[i])
	}
	return t
}

func (t tokens) floor() tokens {
	for i := range t {
		t[i] = max(t[i], 0)
	}
	return t
}

func (t tokens) total() int64 { return t[0] + t[1] + t[3] + t[4] }
