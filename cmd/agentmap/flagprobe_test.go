package main

import (
	"bytes"
	"flag"
	"reflect"
	"testing"
	"time"
)

// The probe reads what the flag package itself prints: every kind of flag
// comes back with its name, whether it takes a value, its usage and default.
func TestParseDefaultsReadsTheFlagPackage(t *testing.T) {
	fl := flag.NewFlagSet("x", flag.ContinueOnError)
	fl.Bool("f", false, "follow")
	fl.Int("n", 100, "print the last N lines")
	fl.String("agent", "", "only this `agent`'s sessions")
	fl.String("o", ".", "output:\na directory or a file")
	fl.Duration("idle", 15*time.Minute, "quiet time")
	fl.Bool("json", false, "print JSON")
	var b bytes.Buffer
	fl.SetOutput(&b)
	fl.PrintDefaults()
	got := parseDefaults("usage: agentmap x\nSome words.\n" + b.String())
	want := []probedFlag{
		{Name: "agent", Type: "agent", Usage: "only this agent's sessions"},
		{Name: "f", Usage: "follow"},
		{Name: "idle", Type: "duration", Usage: "quiet time", Def: "15m0s"},
		{Name: "json", Usage: "print JSON"},
		{Name: "n", Type: "int", Usage: "print the last N lines", Def: "100"},
		{Name: "o", Type: "string", Usage: "output: a directory or a file", Def: "."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// Every command answers -h with its usage and flags, without doing
// anything else.
func TestEveryCommandIsProbed(t *testing.T) {
	for _, c := range commands() {
		p := probeCommand(c)
		if !bytes.HasPrefix([]byte(p.Usage), []byte("usage: agentmap ")) || len(p.Flags) == 0 && c.name != "start" && c.name != "stop" && c.name != "restart" {
			t.Errorf("%s -h: %q", c.name, p.Usage)
		}
	}
	if _, ok := probeCommand(findCommand("list")).flag("outcome"); !ok {
		t.Error("list has no --outcome")
	}
}
