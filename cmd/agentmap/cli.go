package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/export"
)

// The command-line layer: cobra gives the command tree, `help CMD`, shell
// completion and the man page; each command still parses its own flags
// with its own flag.FlagSet (DisableFlagParsing), so that every flag,
// spelling (-since as well as --since) and exit code stays what it was.

// globalFlags are the flags that mean the same to every command that has
// them; given before the command's name they are handed to it.
var globalFlags = []struct{ name, usage string }{
	{"config", "the config file (default $" + config.EnvConfig + ", else the user config directory's agentmap/config.toml)"},
	{"data-dir", "where state.db and maps/ live (default: data_dir of the config)"},
	{"log-level", "debug, info, warn or error"},
	{"json", "print JSON (commands that print tables or reports)"},
}

func findCommand(name string) command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return command{}
}

// newRoot builds the command tree; a command's exit code lands in *code.
func newRoot(ctx context.Context, stdout, stderr io.Writer, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:   "agentmap",
		Short: "a faithful, private record of what coding agents do on this machine",
		Long: "agentmap follows the session logs of coding agents and writes each session as a redacted\n" +
			"agentplay/v1 session map: no prompt, reply, file content or command argument, ever.",
		SilenceErrors: true, SilenceUsage: true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: true},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	for _, g := range globalFlags {
		if g.name == "json" {
			root.PersistentFlags().Bool(g.name, false, g.usage)
		} else {
			root.PersistentFlags().String(g.name, "", g.usage)
		}
	}
	root.Flags().Bool("version", false, "print the version")
	for _, c := range commands() {
		c := c
		sub := &cobra.Command{
			Use:                c.name,
			Short:              c.summary,
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				*code = c.run(ctx, args, stdout, stderr)
				return nil
			},
			ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeArgs(c, args, toComplete)
			},
		}
		sub.SetHelpFunc(func(*cobra.Command, []string) { io.WriteString(stdout, probeCommand(c).Usage) })
		root.AddCommand(sub)
	}
	root.AddCommand(completionCommand(stdout, code), manCommand(stdout))
	return root
}

// manCommand writes the man pages (agentmap.1 and agentmap-COMMAND.1) from
// the same definitions as help and completion; packaging runs it.
func manCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "write the man pages into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			adoptFlags(root)
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{Title: "AGENTMAP", Section: "1", Source: "agentmap " + currentBuild().short(),
				Manual: "agentmap manual"}
			if err := doc.GenManTree(root, header, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "man pages in %s\n", args[0])
			return nil
		},
	}
}

// adoptFlags gives each command its flags as pflag definitions, for the
// man page (cobra's doc generator reads them).
func adoptFlags(root *cobra.Command) {
	for _, sub := range root.Commands() {
		c := findCommand(sub.Name())
		if c.run == nil {
			continue
		}
		p := probeCommand(c)
		// The command's own words: its usage line becomes the synopsis,
		// the lines up to its flag list the description.
		var long []string
		for i, line := range strings.Split(p.Usage, "\n") {
			if u, ok := strings.CutPrefix(line, "usage: agentmap "); ok && i == 0 {
				if strings.SplitN(u, " ", 2)[0] == c.name {
					sub.Use = u
				}
				continue
			}
			if strings.HasPrefix(line, "  -") {
				break
			}
			long = append(long, line)
		}
		sub.Long = strings.TrimSpace(strings.Join(long, "\n"))
		for _, f := range p.Flags {
			if sub.Flags().Lookup(f.Name) != nil || root.PersistentFlags().Lookup(f.Name) != nil {
				continue
			}
			short := "" // a one-letter flag (-o, -f) is shown as the short form it is
			if len(f.Name) == 1 {
				short = f.Name
			}
			if f.Type == "" {
				sub.Flags().BoolP(f.Name, short, false, f.Usage)
			} else {
				sub.Flags().StringP(f.Name, short, f.Def, f.Usage)
			}
		}
	}
}

func completionCommand(stdout io.Writer, code *int) *cobra.Command {
	return &cobra.Command{
		Use:       "completion bash|zsh|fish",
		Short:     "print the shell completion script for bash, zsh or fish",
		Long:      "Prints a completion script. bash: agentmap completion bash > ~/.local/share/bash-completion/completions/agentmap\nzsh: agentmap completion zsh > \"${fpath[1]}/_agentmap\"\nfish: agentmap completion fish > ~/.config/fish/completions/agentmap.fish",
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			var err error
			switch args[0] {
			case "bash":
				err = root.GenBashCompletionV2(stdout, true)
			case "zsh":
				err = root.GenZshCompletion(stdout)
			case "fish":
				err = root.GenFishCompletion(stdout, true)
			}
			if err != nil {
				*code = exitFailure
			}
			return err
		},
	}
}

// completeArgs completes a command's flags and the values of the flags
// whose values are known (agents from the registry, outcomes, formats).
func completeArgs(c command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	p := probeCommand(c)
	if strings.HasPrefix(toComplete, "-") {
		var out []string
		for _, f := range p.Flags {
			out = append(out, "--"+f.Name+"\t"+f.Usage)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "-") && !strings.Contains(args[n-1], "=") {
		if f, ok := p.flag(strings.TrimLeft(args[n-1], "-")); ok && f.Type != "" {
			if vals := flagValues(f.Name); vals != nil {
				return vals, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveDefault
		}
	}
	if c.name == "config" && !slices.ContainsFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") }) {
		return []string{"init", "check", "show"}, cobra.ShellCompDirectiveNoFileComp
	}
	if c.name == "completion" {
		return []string{"bash", "zsh", "fish"}, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveDefault
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
		return []string{"debug", "info", "warn", "error"}
	}
	return nil
}

// isHelp reports whether args ask for help (-h, -help, --help) before a "--".
func isHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// hoistGlobals moves global flags given before the command's name to
// after it: `agentmap --data-dir D list` is `agentmap list --data-dir D`.
// It returns the command's name and arguments, or an error for a flag
// that is not global.
func hoistGlobals(args []string) (name string, rest []string, err error) {
	var globals []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		flagName, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		i := slices.IndexFunc(globalFlags, func(g struct{ name, usage string }) bool { return g.name == flagName })
		if i < 0 {
			return "", nil, fmt.Errorf("unknown flag %s before the command (the global flags are --config, --data-dir, --log-level and --json)", a)
		}
		globals = append(globals, a)
		args = args[1:]
		if !hasValue && flagName != "json" {
			if len(args) == 0 {
				return "", nil, fmt.Errorf("%s needs a value", a)
			}
			globals = append(globals, args[0])
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return "", globals, nil
	}
	return args[0], append(globals, args[1:]...), nil
}

// checkGlobals refuses a global flag the command does not take, rather
// than letting it pass unnoticed.
func checkGlobals(c command, args []string) error {
	var p probe
	probed := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !slices.ContainsFunc(globalFlags, func(g struct{ name, usage string }) bool { return g.name == name }) {
			continue
		}
		if !probed {
			p, probed = probeCommand(c), true
		}
		if _, ok := p.flag(name); !ok {
			return fmt.Errorf("--%s does not apply to %s", name, c.name)
		}
	}
	return nil
}

// runCLI is the whole command line: agentmap [global flags] COMMAND [args].
func runCLI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stdout)
		return exitUsage
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-version"):
		return cmdVersion(ctx, nil, stdout, stderr)
	case args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		usage(stdout)
		return exitOK
	case args[0] == "help":
		if len(args) == 1 {
			usage(stdout)
			return exitOK
		}
		if c := findCommand(args[1]); c.run != nil {
			io.WriteString(stdout, probeCommand(c).Usage)
			return exitOK
		}
		if args[1] == "completion" {
			args = []string{"completion", "--help"}
			break
		}
		fmt.Fprintf(stderr, "agentmap: unknown command %q (see agentmap help)\n", args[1])
		return exitUsage
	}
	name, rest, err := hoistGlobals(args)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap: %v\n", err)
		return exitUsage
	}
	if name == "" {
		usage(stderr)
		return exitUsage
	}
	code := exitOK
	root := newRoot(ctx, stdout, stderr, &code)
	c := findCommand(name)
	switch {
	case c.run != nil && isHelp(rest):
		io.WriteString(stdout, probeCommand(c).Usage)
		return exitOK
	case c.run != nil:
		if err := checkGlobals(c, rest); err != nil {
			fmt.Fprintf(stderr, "agentmap %s: %v\n", name, err)
			return exitUsage
		}
	case name == "completion" || name == "man" || strings.HasPrefix(name, cobra.ShellCompRequestCmd):
		adoptFlags(root)
	default:
		fmt.Fprintf(stderr, "agentmap: unknown command %q (see agentmap help)\n", name)
		return exitUsage
	}
	root.SetArgs(append([]string{name}, rest...))
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", name, err)
		if code == exitOK {
			code = exitUsage
		}
	}
	return code
}
