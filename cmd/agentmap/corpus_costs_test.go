package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/watchers/codex"
)

// usageSum is an independent tally of one session's billed usage.
type usageSum struct {
	in, cw, cr, out int64
	usd             float64
}

func (u *usageSum) add(model string, p prices.Usage) {
	u.in += p.In
	u.cw += p.CW5m + p.CW1h
	u.cr += p.CR
	u.out += p.Out
	if pr, ok := prices.Lookup(model); ok {
		u.usd += pr.Cost(p)
	}
}

// TestCorpusCostsMatchRawUsage compares every Claude and Codex session map
// of the corpus with a tally made here, straight from the raw usage lines
// and at list prices, by rules written down independently of the parsers:
//
//   - Claude: a file is the log of the session most of its lines name
//     (sessionId); a subagent file names its parent's. Every assistant line
//     with a usage, in every file of the session (subagent and compaction
//     transcripts included), and every subagent's assistant line that the
//     parent's transcript relays (an agent_progress line's data.message),
//     count once per message id + request id: Claude Code repeats a
//     response's usage on each of its lines, and relays the lines it also
//     writes into the subagent's file, so the line with the largest total
//     wins. The 1-hour part of the cache writes and fast mode are priced as
//     such.
//   - Codex: per rollout, the steps of token_count's cumulative total,
//     skipping a total equal to the last one (Codex re-emits it); input
//     less cached reads and cache writes is fresh input.
//
// Each map is matched to its tally by the session id the map names. Tokens
// (in, cw, cr, out) and cost must agree within 0.5% for each session, every
// session with usage must have a map to compare with, and a map with
// tokens must have usage lines; the figure is printed.
func TestCorpusCostsMatchRawUsage(t *testing.T) {
	want := map[string]*usageSum{} // agent/native -> tally
	claudeTally(t, corpusLogs(t, "claude"), want)
	for _, f := range corpusLogs(t, "codex") {
		codexTally(t, f, want)
	}
	compared, within := map[string]int{}, map[string]int{}
	seen := map[string]bool{}
	for _, agent := range []string{"claude", "codex"} {
		var stderr bytes.Buffer
		sessions, _ := collect(context.Background(), corpusLogs(t, agent), "auto", &stderr)
		for _, s := range sessions {
			if len(s.children) > 0 || s.parent != "" {
				// A Codex parent and its child rollouts: lanes of one map,
				// tallied per file here.
				seen[agent+"/"+s.native] = true
				for _, c := range s.children {
					seen[agent+"/"+c.native] = true
				}
				continue
			}
			m, err := buildMap(s, builder.Options{})
			if err != nil {
				t.Fatal(err)
			}
			key := agent + "/" + m.Session.ID[strings.LastIndexByte(m.Session.ID, ':')+1:]
			seen[key] = true
			w := want[key]
			if w == nil {
				if m.Totals.Tokens > 0 {
					t.Errorf("%s: the map counts %d tokens, the raw lines none", key, m.Totals.Tokens)
				}
				continue // no usage line at all
			}
			var got usageSum
			for _, e := range m.Events {
				if e.Kind == "llm" {
					got.in, got.cw, got.cr, got.out = got.in+e.In, got.cw+e.CW, got.cr+e.CR, got.out+e.Out
				}
			}
			got.usd = m.Totals.CostUSD
			compared[agent]++
			ok := near(got.in, w.in) && near(got.cw, w.cw) && near(got.cr, w.cr) && near(got.out, w.out) &&
				math.Abs(got.usd-w.usd) <= 0.005*w.usd+1e-6
			if m.Session.Truncated {
				ok = ok || m.Totals.Tokens == w.in+w.cw+w.cr+w.out // events cut at the cap; totals still whole
			}
			if ok {
				within[agent]++
				continue
			}
			t.Errorf("%s %s: map in/cw/cr/out %d/%d/%d/%d $%.4f, raw usage %d/%d/%d/%d $%.4f",
				agent, s.native, got.in, got.cw, got.cr, got.out, got.usd, w.in, w.cw, w.cr, w.out, w.usd)
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("%s: usage lines, but no map of the session", key)
		}
	}
	t.Logf("corpus: %d of %d Claude and %d of %d Codex sessions agree with the raw usage lines within 0.5%% (tokens in, cw, cr, out and cost)",
		within["claude"], compared["claude"], within["codex"], compared["codex"])
	if compared["claude"] < 25 || compared["codex"] < 13 {
		t.Errorf("only %d Claude and %d Codex sessions compared", compared["claude"], compared["codex"])
	}
}

func near(a, b int64) bool {
	return math.Abs(float64(a-b)) <= 0.005*math.Abs(float64(b))
}

func scanLines(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	f, err := codex.OpenMaybeZstd(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
}

// claudeTally adds the requests of the Claude logs paths to out, by session
// (see TestCorpusCostsMatchRawUsage for the rules).
func claudeTally(t *testing.T, paths []string, out map[string]*usageSum) {
	type usage struct {
		In      int64  `json:"input_tokens"`
		CW      int64  `json:"cache_creation_input_tokens"`
		CR      int64  `json:"cache_read_input_tokens"`
		Out     int64  `json:"output_tokens"`
		Speed   string `json:"speed"`
		Creator *struct {
			H1 int64 `json:"ephemeral_1h_input_tokens"`
			M5 int64 `json:"ephemeral_5m_input_tokens"`
		} `json:"cache_creation"`
	}
	type message struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage *usage `json:"usage"`
	}
	type assistant struct {
		Type      string   `json:"type"`
		RequestID string   `json:"requestId"`
		Message   *message `json:"message"`
	}
	type line struct {
		assistant
		SessionID string `json:"sessionId"`
		Data      *struct {
			Type    string     `json:"type"`
			Message *assistant `json:"message"`
		} `json:"data"`
	}
	type req struct {
		session, model string
		u              prices.Usage
	}
	best := map[string]req{}
	var order []string
	n := 0
	total := func(x prices.Usage) int64 { return x.Prompt() + x.Out }
	for _, path := range paths {
		// The file's requests, keyed by message id + request id, and the
		// session ids of its lines.
		type fileReq struct {
			key, model string
			u          prices.Usage
		}
		var reqs []fileReq
		ids := map[string]int{}
		scanLines(t, path, func(b []byte) {
			var l line
			if json.Unmarshal(b, &l) != nil {
				return
			}
			if l.SessionID != "" {
				ids[l.SessionID]++
			}
			a := &l.assistant
			if l.Type == "progress" && l.Data != nil && l.Data.Type == "agent_progress" && l.Data.Message != nil {
				a = l.Data.Message // a subagent's line, relayed
			}
			if a.Type != "assistant" || a.Message == nil || a.Message.Usage == nil || a.Message.Model == "<synthetic>" {
				return
			}
			u := a.Message.Usage
			cw := u.CW
			var h1 int64
			if u.Creator != nil {
				if cw == 0 {
					cw = u.Creator.M5 + u.Creator.H1
				}
				h1 = min(u.Creator.H1, cw)
			}
			key := a.Message.ID + "|" + a.RequestID
			if a.Message.ID == "" {
				n++
				key += "|" + strings.Repeat("#", n)
			}
			reqs = append(reqs, fileReq{key, a.Message.Model,
				prices.Usage{In: u.In, CW5m: cw - h1, CW1h: h1, CR: u.CR, Out: u.Out, Fast: u.Speed == "fast"}})
		})
		session := ""
		for id, c := range ids {
			if session == "" || c > ids[session] || c == ids[session] && id < session {
				session = id
			}
		}
		if session == "" {
			continue
		}
		for _, r := range reqs {
			key := session + "|" + r.key
			if prev, seen := best[key]; !seen || total(r.u) >= total(prev.u) {
				if !seen {
					order = append(order, key)
				}
				best[key] = req{session, r.model, r.u}
			}
		}
	}
	for _, k := range order {
		r := best[k]
		s := out["claude/"+r.session]
		if s == nil {
			s = &usageSum{}
			out["claude/"+r.session] = s
		}
		s.add(r.model, r.u)
	}
}

func codexTally(t *testing.T, path string, out map[string]*usageSum) {
	if strings.HasSuffix(path, ".json") {
		return // the oldest single-JSON form carries no token counts
	}
	type tot struct {
		In  int64 `json:"input_tokens"`
		CR  int64 `json:"cached_input_tokens"`
		CW  int64 `json:"cache_write_input_tokens"`
		Out int64 `json:"output_tokens"`
	}
	type line struct {
		Type    string `json:"type"`
		Payload struct {
			Type  string `json:"type"`
			ID    string `json:"id"`
			Model string `json:"model"`
			Info  *struct {
				Total *tot `json:"total_token_usage"`
				Last  *tot `json:"last_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	id, model := "", ""
	// Codex keeps more than one running total in a rollout (a /review
	// thread counts from zero, then the thread's own total resumes): every
	// total seen before is a repeat, and a new total steps from the nearest
	// running total below it.
	seen := map[tot]bool{}
	var heads []tot
	s := &usageSum{}
	scanLines(t, path, func(b []byte) {
		var l line
		if json.Unmarshal(b, &l) != nil {
			return
		}
		switch {
		case l.Type == "session_meta" && id == "":
			id = l.Payload.ID
		case l.Type == "turn_context" && l.Payload.Model != "":
			model = l.Payload.Model
		case l.Type == "event_msg" && l.Payload.Type == "token_count" && l.Payload.Info != nil && l.Payload.Info.Total != nil:
			cur := *l.Payload.Info.Total
			if seen[cur] {
				return // a re-emit of a total already counted
			}
			seen[cur] = true
			from := -1
			for i, h := range heads {
				below := cur.In >= h.In && cur.Out >= h.Out && cur.CR >= h.CR && cur.CW >= h.CW
				if below && (from < 0 || h.In+h.Out > heads[from].In+heads[from].Out) {
					from = i // the nearest running total below
				}
			}
			var d tot
			if from >= 0 {
				h := heads[from]
				d = tot{cur.In - h.In, cur.CR - h.CR, cur.CW - h.CW, cur.Out - h.Out}
				heads = append(heads[:from], heads[from+1:]...)
			} else {
				d = cur // a counter that starts from zero
				if last := l.Payload.Info.Last; last != nil && last.In <= cur.In && last.Out <= cur.Out {
					d = *last // or continues history this rollout does not hold (a fork)
				}
			}
			heads = append(heads, cur)
			cr := min(max(d.CR, 0), d.In)
			cw := min(max(d.CW, 0), d.In-cr)
			s.add(model, prices.Usage{In: d.In - cr - cw, CW5m: cw, CR: cr, Out: d.Out})
		}
	})
	if id != "" && s.in+s.cw+s.cr+s.out > 0 {
		out["codex/"+id] = s
	}
}
