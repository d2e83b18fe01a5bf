package builder

import (
	"regexp"
	"sort"
	"strings"

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
//
// A total names its models as the client asked for them, which is not
// always as the responses name them: Claude Code writes a 1M-context
// model as claude-opus-4-6[1m] and a Bedrock one with its provider's
// prefix, where each assistant line says claude-opus-4-6. Totals and
// requests are matched by sameModel, and a side request takes the name
// the session's requests of that model carry (the client's name only
// when none has it), so that such a session neither counts its requests
// twice nor shows one model as two.
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
	// The name a model's side requests take: the one the session's
	// requests of that model carry (the smallest when several spellings
	// are the same model), else the client's.
	names := map[string]string{}
	keys := make([]string, len(reqs)) // each request's sameModel, made once
	for i, n := range reqs {
		keys[i] = sameModel(n.ev.Model)
		if name, ok := names[keys[i]]; !ok || n.ev.Model < name {
			names[keys[i]] = n.ev.Model
		}
	}
	main := b.laneIdx[""]
	for _, proc := range procs {
		recs := byProc[proc]
		// shortfall[k][model] at each record, in input order, keyed by
		// sameModel; names gives each key the name its requests carry.
		short := make([]map[string]tokens, len(recs))
		for k, i := range recs {
			at := b.t(i)
			seen := map[string]tokens{}
			for j, n := range reqs {
				if b.timed && (n.ev.T < proc || n.ev.T > at) {
					continue
				}
				seen[keys[j]] = seen[keys[j]].add(tokensOf(n.priced))
			}
			total := map[string]tokens{}
			for _, m := range b.in[i].Total.Models {
				key := sameModel(m.Model)
				total[key] = total[key].add(tokens{m.In, m.CW, m.CW1h, m.CR, m.Out})
				if _, ok := names[key]; !ok {
					names[key] = m.Model
				}
			}
			short[k] = map[string]tokens{}
			for key, t := range total {
				short[k][key] = t.minus(seen[key])
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
					ev: Event{Kind: "llm", T: b.t(i), Model: names[m], In: aux.In, CW: aux.CW, CR: aux.CR, Out: aux.Out}})
			}
		}
	}
}

// sameModel is the name under which a client total's model and a
// request's are the same model: as the price table normalises it (no
// provider prefix, no context suffix such as [1m]), without a Bedrock
// version tail on a claude- model (-v1:0, -v2:0, -v1), with Vertex's @date written as the
// API's -date and a trailing date left out, so that an alias
// (claude-opus-4-5) and its dated id (claude-opus-4-5-20251101) match.
// Two dated snapshots of one model (-20240620, -20241022) are one then:
// a client's total never holds both in practice, and they cost alike.
func sameModel(model string) string {
	m := strings.ReplaceAll(prices.Normalise(model), "@", "-")
	if strings.HasPrefix(m, "claude-") {
		// Bedrock's tail on an Anthropic model only: deepseek-v3 and
		// deepseek-v2 are two models.
		m = bedrockTail.ReplaceAllString(m, "")
	}
	if i := len(m) - 9; i > 0 && m[i] == '-' && allDigits(m[i+1:]) {
		m = m[:i]
	}
	return m
}

// bedrockTail is a Bedrock model id's version tail (-v2:0, -v1), which
// the price table's normalisation leaves when it is not -v1:.
var bedrockTail = regexp.MustCompile(`-v[0-9]+(:[0-9]+)?$`)

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
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
