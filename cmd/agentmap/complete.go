package main

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export"
)

// completeArgs completes a command's flags, the values of the flags whose
// values are known (agents from the registry, outcomes, formats), and the
// action word of a command that takes one first (config, usage, sink).
// Commands parse their own flags (DisableFlagParsing), so cobra hands
// every word over as it was typed, --flag=value included.
func completeArgs(ctx context.Context, c command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	p := probeCommand(c)
	if strings.HasPrefix(toComplete, "-") {
		if name, value, ok := strings.Cut(strings.TrimLeft(toComplete, "-"), "="); ok {
			return completeFlagValue(p, name, value)
		}
		var out []string
		for _, f := range p.Flags {
			out = append(out, flagSpelling(f.Name)+"\t"+f.Usage)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "-") && args[n-1] != "-" && !strings.Contains(args[n-1], "=") &&
		!slices.Contains(args, "--") {
		if f, ok := p.flag(strings.TrimLeft(args[n-1], "-")); ok && f.Type != "" {
			return completeFlagValue(p, f.Name, toComplete)
		}
	}
	if actions := actionWords(c.name, p); actions != nil && len(positionals(p, args)) == 0 {
		return actions, cobra.ShellCompDirectiveNoFileComp
	}
	switch c.name {
	case "completion":
		return completionShells, cobra.ShellCompDirectiveNoFileComp
	case "build", "validate", "export":
		return nil, cobra.ShellCompDirectiveDefault // logs, maps: files
	case "show", "flush":
		pos, given := readArgs(p, args)
		if len(pos) > 0 || (given["all"] != "" && given["all"] != "false") {
			break
		}
		if ids := sessionIDs(ctx, given, toComplete); ids != nil {
			// Newest first, as list shows them, not sorted by the shell.
			return ids, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
		}
	}
	// No other command takes a file: the others take an action word or
	// nothing.
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completionSessions is how many session ids completion offers at most:
// the newest of those that start with the word typed. A screen of them is
// what a user reads; a store of 100,000 sessions must not make every
// Tab wait on them all.
var completionSessions = 200

// sessionIDs are the ids show and flush complete: the newest sessions of
// the store's flush records, as list finds them (the running daemon over
// its socket, else the state read-only), each described by its agent,
// repository and start. No map is opened. The data directory is the one
// the command would use (--data-dir and --config given on the line
// count); a store not there or that cannot be read offers nothing, and
// nothing is written: whatever completion prints lands in the shell.
// An agent/id typed completes to agent/id, the agent as typed.
func sessionIDs(ctx context.Context, given map[string]string, toComplete string) []string {
	cfg, dir := given["config"], given["data-dir"]
	dataDir, _ := opsFlags{config: &cfg, dataDir: &dir}.resolve("completion", io.Discard)
	if fi, err := os.Stat(dataDir); dataDir == "" || err != nil || !fi.IsDir() {
		return nil
	}
	b, err := openBackend(dataDir)
	if err != nil {
		return nil
	}
	defer b.close()
	typedAgent, prefix, withAgent := strings.Cut(toComplete, "/")
	agent := ""
	if withAgent {
		agent, _, _ = strings.Cut(keyOf(toComplete), "/")
	} else {
		prefix = toComplete
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var es []daemon.Entry
	switch {
	case b.client != nil:
		es, err = b.client.Recent(ctx, agent, prefix, completionSessions)
	case b.db != nil:
		es, err = daemon.Recent(b.db, agent, prefix, completionSessions)
	}
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		// One candidate a line, its description after a tab: an id
		// that would break the line (a record in a store someone else
		// wrote) is no id to offer.
		if strings.ContainsFunc(e.ID, unicode.IsSpace) || strings.ContainsFunc(e.ID, unicode.IsControl) {
			continue
		}
		id := e.ID
		if withAgent {
			id = typedAgent + "/" + id
		}
		out = append(out, id+"\t"+sessionDescription(e))
	}
	return out
}

// sessionDescription is what completion shows beside a session id: its
// agent, its repository and when it started, as list names them.
func sessionDescription(e daemon.Entry) string {
	parts := []string{e.Agent}
	if len(e.Repos) > 0 {
		parts = append(parts, strings.Join(e.Repos, " "))
	}
	if !e.Start.IsZero() {
		parts = append(parts, e.Start.Local().Format("2006-01-02 15:04"))
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.Join(parts, ", "))
}

// fileFlags are the flags whose value is a file or a directory, which the
// shell's own completion offers; the value of any other flag (a window, a
// repo, a session id, a number) is no file name, and none is offered.
var fileFlags = []string{"config", "data-dir", "o", "out", "maps", "inputs", "log-file", "hash-key-file", "export-dir", "root"}

// completeFlagValue completes the value of c's flag name, given as
// prefix so far. The candidates are the values alone, as cobra's own flag
// completion returns them for --flag=value too: the bash script completes
// the word after "=", and the zsh and fish scripts put "--flag=" back in
// front of each.
func completeFlagValue(p probe, name, prefix string) ([]string, cobra.ShellCompDirective) {
	f, ok := p.flag(name)
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	vals := flagValues(f.Name)
	if f.Type == "" {
		vals = []string{"true", "false"}
	}
	if vals == nil {
		if slices.Contains(fileFlags, f.Name) {
			return nil, cobra.ShellCompDirectiveDefault // the shell's own file names
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, v := range vals {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// actionWords are the words a command takes first, as its usage line
// lists them: `config init|check|show`, `usage [daily|weekly|…]`. nil for
// a command whose first argument is not one of a few words.
func actionWords(name string, p probe) []string {
	line, _, _ := strings.Cut(p.Usage, "\n")
	rest, ok := strings.CutPrefix(line, "usage: agentmap "+name+" ")
	if !ok {
		return nil
	}
	first, _, _ := strings.Cut(rest, " ")
	if opt, ok := strings.CutPrefix(first, "["); ok {
		first, ok = strings.CutSuffix(opt, "]")
		if !ok {
			return nil
		}
	}
	words := strings.Split(first, "|")
	if len(words) < 2 {
		return nil
	}
	for _, w := range words {
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			return nil
		}
	}
	return words
}

// positionals are the arguments among args that are not flags or flag
// values, read as interspersed reads them.
func positionals(p probe, args []string) []string {
	pos, _ := readArgs(p, args)
	return pos
}

// readArgs reads args as interspersed does: the positional arguments, and
// the flags given with their values (the last of each; "true" for a
// boolean given alone). A global flag takes a value (but --json) whether
// or not the command lists it, as hoistGlobals reads it before the
// command.
func readArgs(p probe, args []string) (pos []string, given map[string]string) {
	given = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), given
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if hasValue {
			given[name] = value
			continue
		}
		given[name] = "true"
		if f, ok := p.flag(name); (ok && f.Type != "") || (!ok && isGlobalValueFlag(name)) {
			given[name] = ""
			if i++; i < len(args) {
				given[name] = args[i]
			}
		}
	}
	return pos, given
}

func isGlobalValueFlag(name string) bool {
	return name != "json" && slices.ContainsFunc(globalFlags, func(g struct{ name, usage string }) bool { return g.name == name })
}

// completionRequest reorders the words of `agentmap __complete WORDS…
// TOCOMPLETE` given global flags before the command, as the command line
// itself hands them to it: cobra would take them for flags of the root,
// and complete neither the command's name nor its arguments after one.
// `--data-dir D l` completes the commands; `--data-dir D list --agent ""`
// is `list --data-dir D --agent ""`.
func completionRequest(args []string) []string {
	if len(args) < 2 {
		return args
	}
	words, toComplete := args[:len(args)-1], args[len(args)-1]
	if slices.ContainsFunc(words, func(a string) bool {
		return a == "-h" || a == "-help" || a == "--help" || a == "--version" || a == "-version"
	}) {
		return args
	}
	name, globals, rest, err := hoistGlobals(words)
	if err != nil || len(globals) == 0 {
		return args // a global flag's own value is completed by cobra
	}
	if name == "" {
		if strings.HasPrefix(toComplete, "-") {
			return args // more global flags
		}
		return []string{toComplete}
	}
	out := append(append([]string{name}, globals...), rest...)
	return append(out, toComplete)
}

// flagValues are the values a flag takes, when they are a known list.
func flagValues(name string) []string {
	switch name {
	case "agent":
		return agentNames()
	case "outcome":
		return builder.Outcomes
	case "format":
		var out []string
		for _, f := range export.Formats() {
			out = append(out, string(f))
		}
		return out
	case "path-mode":
		return config.PathModes
	case "log-level":
		return config.LogLevels
	}
	return nil
}
