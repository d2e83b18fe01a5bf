package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/export"
)

// completeArgs completes a command's flags, the values of the flags whose
// values are known (agents from the registry, outcomes, formats), and the
// action word of a command that takes one first (config, usage, sink).
// Commands parse their own flags (DisableFlagParsing), so cobra hands
// every word over as it was typed, --flag=value included.
func completeArgs(c command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
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
	}
	// No other command takes a file: show and flush take a session id
	// (reading the store to list ids would mean loading the config
	// here), the others an action word or nothing.
	return nil, cobra.ShellCompDirectiveNoFileComp
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
// values, read as interspersed reads them. A global flag takes a value
// (but --json) whether or not the command lists it, as hoistGlobals reads
// it before the command.
func positionals(p probe, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if hasValue {
			continue
		}
		if f, ok := p.flag(name); (ok && f.Type != "") || (!ok && isGlobalValueFlag(name)) {
			i++
		}
	}
	return out
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
