package main

import (
	"index/suffixarray"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The privacy audit's two halves, shared by every audit of an output: the
// needles of the corpus logs, and the search for them in a haystack.

// needlesCache keeps the needles of each list of agents for the package's
// other audits: reading the corpus for them is the audit's dearest part.
var needlesCache = struct {
	sync.Mutex
	m map[string]map[string]map[string]origin
}{m: map[string]map[string]map[string]origin{}}

// corpusNeedles collects the needles of every agent's corpus logs (text and
// absolute directories), by agent, checking that they can be found. The
// result is shared: callers only read it.
func corpusNeedles(t *testing.T, agents []string) map[string]map[string]origin {
	t.Helper()
	key := strings.Join(agents, ",")
	needlesCache.Lock()
	defer needlesCache.Unlock()
	if all, ok := needlesCache.m[key]; ok {
		return all
	}
	all := map[string]map[string]origin{}
	defer func() {
		if !t.Failed() {
			needlesCache.m[key] = all
		}
	}()
	words := exporterWords(t)
	var sets []*needles
	for _, agent := range agents {
		n := newNeedles(agent)
		for _, f := range corpusLogs(t, agent) {
			n.readLog(t, f)
		}
		sets = append(sets, n)
		words = append(words, n.vocab.Bytes()...)
	}
	for _, n := range sets {
		agent := n.agent
		all[agent] = n.final(words)
		byField := map[string]int{}
		for _, o := range all[agent] {
			byField[topField(o.field)]++
		}
		t.Logf("%s: %d needles (%d candidates before the vocabulary); by field: %v", agent, len(all[agent]), len(n.text), byField)
		checkNeedlesAreInTheirLogs(t, agent, all[agent])
		dirs := n.absolute()
		t.Logf("%s: %d needles of absolute working and home directories", agent, len(dirs))
		for s, o := range dirs {
			all[agent][s] = o
		}
		if len(all[agent]) < minNeedles {
			t.Errorf("%s: only %d needles: the audit would prove little", agent, len(all[agent]))
		}
	}
	return all
}

// findLeaks reports every needle found in the haystack, with where.
func findLeaks(t *testing.T, hay *haystack, agents []string, all map[string]map[string]origin) {
	t.Helper()
	idx := suffixarray.New(hay.buf.Bytes())
	leaks := 0
	for _, agent := range agents {
		needles := all[agent]
		keys := make([]string, 0, len(needles))
		for s := range needles {
			keys = append(keys, s)
		}
		sort.Strings(keys)
		for _, s := range keys {
			offs := idx.Lookup([]byte(s), -1)
			if len(offs) == 0 {
				continue
			}
			seen := map[string]bool{}
			for _, off := range offs {
				w := hay.where(off)
				if seen[w] {
					continue
				}
				seen[w] = true
				leaks++
				if leaks <= 40 {
					o := needles[s]
					t.Errorf("%s: text of %d bytes from %s (field %s) found in %s", agent, len(s), o.file, o.field, w)
				}
			}
		}
	}
	if leaks > 40 {
		t.Errorf("%d leaks in all", leaks)
	}
}
