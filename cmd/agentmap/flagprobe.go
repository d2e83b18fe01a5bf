package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
)

// A command keeps its own flag.FlagSet, built inside its run function:
// that is how every command is written, and how a new one plugs in with
// one line in commands(). The command-line layer learns a command's flags
// by asking it for help (`CMD -h`, which every flag.FlagSet answers
// without running anything) and reading the flag list that
// flag.PrintDefaults writes in its documented layout:
//
//	  -name type
//	    	usage (default value)
//	  -x	usage of a one-letter boolean
//
// Help, completion and the man page are made from what it finds.

// probedFlag is one flag of a command.
type probedFlag struct {
	Name  string
	Type  string // "" for a boolean; else the value's name (string, duration, int …)
	Usage string
	Def   string // the default as printed, "" when none
}

// probe is what a command says for -h: its usage text and its flags.
type probe struct {
	Usage string
	Flags []probedFlag
}

func (p probe) flag(name string) (probedFlag, bool) {
	for _, f := range p.Flags {
		if f.Name == name {
			return f, true
		}
	}
	return probedFlag{}, false
}

var probes sync.Map // command name -> probe

// probeCommand asks c for its help once.
func probeCommand(c command) probe {
	if p, ok := probes.Load(c.name); ok {
		return p.(probe)
	}
	var out bytes.Buffer
	c.run(context.Background(), []string{"-h"}, io.Discard, &out)
	p := probe{Usage: out.String(), Flags: parseDefaults(out.String())}
	probes.Store(c.name, p)
	return p
}

// parseDefaults reads the flags out of flag.PrintDefaults' output.
func parseDefaults(text string) []probedFlag {
	var out []probedFlag
	var cur *probedFlag
	finish := func() {
		if cur == nil {
			return
		}
		u := strings.TrimSpace(cur.Usage)
		if i := strings.LastIndex(u, " (default "); i >= 0 && strings.HasSuffix(u, ")") {
			cur.Def = strings.Trim(u[i+len(" (default "):len(u)-1], `"`)
			u = u[:i]
		}
		cur.Usage = u
		out = append(out, *cur)
		cur = nil
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "    \t"):
			if cur != nil {
				if cur.Usage != "" {
					cur.Usage += " "
				}
				cur.Usage += strings.TrimPrefix(line, "    \t")
			}
		case strings.HasPrefix(line, "  -") && len(line) > 3 && line[3] != ' ' && line[3] != '-':
			finish()
			head, usage, _ := strings.Cut(line[3:], "\t") // "-x\tusage": a one-letter flag on one line
			name, typ, _ := strings.Cut(strings.TrimSpace(head), " ")
			cur = &probedFlag{Name: name, Type: typ, Usage: usage}
		default:
			finish()
		}
	}
	finish()
	return out
}
