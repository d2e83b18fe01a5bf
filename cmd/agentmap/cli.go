package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/internal/words"
	"github.com/agentmap/agentmap/packaging"
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
	{"json", "print JSON (status, list, show, usage, prices, sink status, doctor, version)"},
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
	// The global flags are root's own, not inherited: a command has the
	// ones its help lists (adoptFlags), as checkGlobals decides, so that
	// completion and the man pages offer no flag a command refuses.
	for _, g := range globalFlags {
		if g.name == "json" {
			root.Flags().Bool(g.name, false, g.usage)
		} else {
			root.Flags().String(g.name, "", g.usage)
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
				return completeArgs(ctx, c, args, toComplete)
			},
		}
		sub.SetHelpFunc(func(*cobra.Command, []string) { io.WriteString(stdout, probeCommand(c).Usage) })
		root.AddCommand(sub)
	}
	root.AddCommand(completionCommand(stdout, code), filesCommand(stdout))
	return root
}

// filesCommand writes what a package installs beside the binary, made
// from the same definitions as help and completion: the man pages
// (man/man1: agentmap.1 and agentmap-COMMAND.1), the completion scripts
// (completions/) and the systemd user unit (systemd/agentmap.service for
// the binary at --bin). Packaging scripts run it; it is not for users.
func filesCommand(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "package-files DIR",
		Short:  "write the man pages, completion scripts and systemd user unit of a package into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
	}
	bin := cmd.Flags().String("bin", "/usr/bin/agentmap", "where the package installs the binary")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root := cmd.Root()
		adoptFlags(root)
		root.DisableAutoGenTag = true
		dir := args[0]
		man := filepath.Join(dir, "man", "man1")
		for _, d := range []string{man, filepath.Join(dir, "completions"), filepath.Join(dir, "systemd")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		date, err := manDate()
		if err != nil {
			return err
		}
		// No Title: GenMan titles each page by its command (AGENTMAP-LIST).
		header := &doc.GenManHeader{Section: "1", Date: &date, Source: "agentmap " + currentBuild().short(),
			Manual: "agentmap manual"}
		if err := genManPages(root, header, man); err != nil {
			return err
		}
		var bash, zsh, fish bytes.Buffer
		root.GenBashCompletionV2(&bash, true)
		root.GenZshCompletion(&zsh)
		root.GenFishCompletion(&fish, true)
		unit, err := packaging.PackagedUnit(*bin)
		if err != nil {
			return err
		}
		for name, b := range map[string][]byte{"completions/agentmap.bash": bash.Bytes(), "completions/_agentmap": zsh.Bytes(),
			"completions/agentmap.fish": fish.Bytes(), "systemd/agentmap.service": unit} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "package files in %s\n", dir)
		return nil
	}
	return cmd
}

// manDate is the date the man pages carry: $SOURCE_DATE_EPOCH when set,
// so that a package built twice from one commit has the same pages
// (reproducible-builds.org), else now. In UTC, so that the month does not
// depend on the zone of the machine that builds.
func manDate() (time.Time, error) {
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		return time.Now().UTC(), nil
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", epoch)
	}
	return time.Unix(secs, 0).UTC(), nil
}

// genManPages writes agentmap.1 and agentmap-COMMAND.1, as
// doc.GenManTree does, but with a one-letter flag shown as -o alone:
// pflag has no flag without a long name, so cobra writes "-o, --o".
func genManPages(root *cobra.Command, header *doc.GenManHeader, dir string) error {
	for _, cmd := range append([]*cobra.Command{root}, root.Commands()...) {
		if cmd != root && (!cmd.IsAvailableCommand() || cmd.IsAdditionalHelpTopicCommand()) {
			continue
		}
		var page bytes.Buffer
		h := *header // GenMan fills in the date of the header it is given
		if err := doc.GenMan(cmd, &h, &page); err != nil {
			return err
		}
		text := page.String()
		if c := findCommand(cmd.Name()); c.run != nil {
			for _, f := range probeCommand(c).Flags {
				if len(f.Name) == 1 {
					text = strings.ReplaceAll(text, `\fB-`+f.Name+`\fP, \fB--`+f.Name+`\fP`, `\fB-`+f.Name+`\fP`)
				}
			}
		}
		name := strings.ReplaceAll(cmd.CommandPath(), " ", "-") + ".1"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// adoptFlags gives each command its flags as pflag definitions, for the
// man page (cobra's doc generator reads them): the flags its help lists,
// the global flags it takes among them, and no other.
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
			if sub.Flags().Lookup(f.Name) != nil {
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
		Short:     completionSummary,
		Long:      "Prints a completion script. bash: agentmap completion bash > ~/.local/share/bash-completion/completions/agentmap\nzsh: agentmap completion zsh > \"${fpath[1]}/_agentmap\"\nfish: agentmap completion fish > ~/.config/fish/completions/agentmap.fish",
		ValidArgs: completionShells,
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

// flagSpelling is a flag as help and completion show it: -o, --since.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
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

// hoistGlobals splits `agentmap [global flags] COMMAND [args]` into the
// command's name, the global flags given before it, and its arguments.
// A help flag among the globals (agentmap --data-dir D --help list) is
// handed to the command, or, with no command, is the help itself.
func hoistGlobals(args []string) (name string, globals, rest []string, err error) {
	help := false
	defer func() {
		if help && err == nil {
			if name == "" {
				name = "help"
			}
			rest = append([]string{"--help"}, rest...)
		}
	}()
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		if a == "-h" || a == "-help" || a == "--help" {
			help = true
			args = args[1:]
			continue
		}
		if a == "--version" || a == "-version" {
			// The version command, with what follows as its flags:
			// agentmap --version --json is agentmap version --json.
			return "version", globals, args[1:], nil
		}
		flagName, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		i := slices.IndexFunc(globalFlags, func(g struct{ name, usage string }) bool { return g.name == flagName })
		if i < 0 {
			return "", nil, nil, fmt.Errorf("unknown flag %s before the command (the global flags are --config, --data-dir, --log-level and --json; --version prints the version)", a)
		}
		globals = append(globals, a)
		args = args[1:]
		if !hasValue && flagName != "json" {
			if len(args) == 0 {
				return "", nil, nil, fmt.Errorf("%s needs a value", a)
			}
			globals = append(globals, args[0])
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return "", globals, nil, nil
	}
	return args[0], globals, args[1:], nil
}

// placeGlobals hands global flags given before the command to it:
// `agentmap --data-dir D list` is `agentmap list --data-dir D`. A command
// that takes an action word first (its usage reads `sink status|resend`,
// or its help lists no flags) gets them after that word.
func placeGlobals(c command, globals, rest []string) []string {
	if len(globals) == 0 {
		return rest
	}
	at := 0
	p := probeCommand(c)
	first, _, _ := strings.Cut(strings.TrimPrefix(strings.SplitN(p.Usage, "\n", 2)[0], "usage: agentmap "+c.name+" "), " ")
	actionFirst := len(p.Flags) == 0 || (strings.Contains(first, "|") && !strings.HasPrefix(first, "[") && !strings.HasPrefix(first, "-"))
	if actionFirst && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		at = 1
	}
	out := append(append([]string{}, rest[:at]...), globals...)
	return append(out, rest[at:]...)
}

// checkGlobals refuses a global flag the command does not take, rather
// than letting it pass unnoticed.
//
// An empty value (--data-dir= or --data-dir "", as an unset variable in a
// script gives) is refused too: the command would take it for the flag
// left out and use the default directory without a word.
func checkGlobals(c command, args []string) error {
	var p probe
	probed := false
	return checkGlobalsOf(c.name, args, func(name string) bool {
		if !probed {
			p, probed = probeCommand(c), true
		}
		_, ok := p.flag(name)
		return ok
	})
}

// checkGlobalsOf is checkGlobals for the command called name, which takes
// the global flags that takes reports. The commands of commands() and
// cobra's completion go through it alike, so that each refuses one in the
// same words.
func checkGlobalsOf(name string, args []string, takes func(flag string) bool) error {
	for i, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		flagName, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !slices.ContainsFunc(globalFlags, func(g struct{ name, usage string }) bool { return g.name == flagName }) {
			continue
		}
		if flagName != "json" && ((hasValue && value == "") || (!hasValue && i+1 < len(args) && args[i+1] == "")) {
			return fmt.Errorf("--%s is empty (leave it out for the default)", flagName)
		}
		// A command whose help lists no flags (start, stop) takes none:
		// its flag package would call a global one unknown, as if it
		// were mistyped.
		if !takes(flagName) {
			return fmt.Errorf("--%s does not apply to %s", flagName, name)
		}
	}
	return nil
}

// missingValue finds a flag of c that takes a value given last, with
// none after it, up to a "--". The flag package would say "flag needs an
// argument: -o" and print every flag; this names the command and points
// at its help, as unknownFlag does.
func missingValue(c command, args []string) (string, bool) {
	for _, a := range flagArgs(probeCommand(c), args) {
		if a.known && a.f.Type != "" && !a.hasValue && a.last {
			return a.name, true
		}
	}
	return "", false
}

// flagArg is one flag among a command's arguments, as the flag package
// reads them: a value flag without "=" takes the next argument.
type flagArg struct {
	arg             string // as given: -bogus, --x=1, -home-me-app/x.jsonl
	name            string
	f               probedFlag
	known, hasValue bool
	last            bool // nothing follows it
}

// flagArgs lists the flags in args up to a "--", reading them as
// interspersed does.
func flagArgs(p probe, args []string) []flagArg {
	var out []flagArg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f, ok := p.flag(name)
		out = append(out, flagArg{arg: a, name: name, f: f, known: ok, hasValue: hasValue, last: i+1 == len(args)})
		if ok && f.Type != "" && !hasValue {
			i++
		}
	}
	return out
}

// completionShells are the shells agentmap completion writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// checkCompletion checks the arguments of agentmap completion as those of
// every command are checked (a global flag it does not take, an unknown
// flag), and that they name one shell: cobra's own words ("accepts 1
// arg(s), received 0") said neither what to give nor where to look.
// Help is left to cobra.
func checkCompletion(args []string) error {
	if isHelp(args) {
		return nil
	}
	if err := checkGlobalsOf("completion", args, func(string) bool { return false }); err != nil {
		return err
	}
	var shells []string
	for i, a := range args {
		if a == "--" {
			shells = append(shells, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			return fmt.Errorf("unknown flag %s (completion takes no flags; see agentmap help completion)", a)
		}
		shells = append(shells, a)
	}
	switch {
	case len(shells) == 0:
		return fmt.Errorf("name the shell: %s (see agentmap help completion)", orList(completionShells))
	case len(shells) > 1:
		return fmt.Errorf("one shell, not %d: %s (see agentmap help completion)", len(shells), orList(completionShells))
	case !slices.Contains(completionShells, shells[0]):
		return fmt.Errorf("unknown shell %q (%s; see agentmap help completion)", shells[0], orList(completionShells))
	}
	return nil
}

// unknownFlag finds a flag, up to a "--", that c's help does not list,
// reading the arguments as interspersed does (a value flag takes the next
// one), and returns the argument as it was given. The flag package would
// say "flag provided but not defined: -x" and print every flag; this names
// the command and points at its help (unknownFlagProblem).
func unknownFlag(c command, args []string) (string, bool) {
	// A command whose help lists no flags takes none.
	for _, a := range flagArgs(probeCommand(c), args) {
		if !a.known && !(c.name == "scan" && runOnlyFlag(a.name)) { // scan says itself that a flag is run's
			return a.arg, true
		}
	}
	return "", false
}

// unknownFlagProblem says that arg is no flag of the command, in the
// spelling the user typed (-bogus stays -bogus; a value after "=" is left
// out). An argument that is a path starting with "-", as Claude Code's
// project directories do (-home-me-app/x.jsonl), is read as a flag
// wherever it stands: it is named whole, with the two ways to give it.
func unknownFlagProblem(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) || exists(arg) {
		return fmt.Sprintf("unknown flag %s (a path that starts with -: give it after --, or as .%c%s)", arg, filepath.Separator, arg)
	}
	return "unknown flag " + name
}

// exists reports whether there is a file of that name, a link included.
func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// unknownCommand says a name is no command, with the nearest ones.
func unknownCommand(root *cobra.Command, name string, stderr io.Writer) int {
	if s := nearCommands(root, name); len(s) > 0 {
		fmt.Fprintf(stderr, "agentmap: unknown command %q (did you mean %s? see agentmap help)\n", name, strings.Join(s, " or "))
		return exitUsage
	}
	fmt.Fprintf(stderr, "agentmap: unknown command %q (see agentmap help)\n", name)
	return exitUsage
}

// nearCommands are the commands a mistyped name may have meant, as git
// suggests them: one edit away (a letter wrong, missing, extra, or two
// side by side swapped: lsit), or the start of a name (stat, for status).
// Two edits make most short names near one another: bogus is no typo of
// logs.
func nearCommands(root *cobra.Command, name string) []string {
	typed := strings.ToLower(name)
	var out []string
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		if osaDistance(typed, c.Name()) <= 1 || (len(typed) >= 2 && strings.HasPrefix(c.Name(), typed)) {
			out = append(out, c.Name())
		}
	}
	return out
}

// osaDistance is the edit distance of a and b counting a swap of two
// adjacent letters as one edit (optimal string alignment).
func osaDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// helpOfHelp is what agentmap help --help and help help print.
const helpOfHelp = `usage: agentmap help [COMMAND]
Prints the commands and the global flags, or, with a COMMAND, its usage and flags
(as agentmap COMMAND --help does).
`

// runCLI is the whole command line: agentmap [global flags] COMMAND [args].
// Whatever the command, a failed write to stdout fails it (see outWriter).
func runCLI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch stdout.(type) {
	case *outWriter, *terminalSafe: // agentmap --data-dir D help list comes back here
		return runCommand(ctx, args, stdout, stderr)
	}
	stdout = wrapStdout(stdout)
	code := runCommand(ctx, args, stdout, stderr)
	if t, ok := stdout.(*terminalSafe); ok {
		t.flush()
	}
	name, _, _, _ := hoistGlobals(args)
	return outputFailed(stdout, name, code, stderr)
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stdout)
		return exitUsage
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
		switch args[1] {
		case "completion":
			args = []string{"completion", "--help"}
		case "help", "-h", "-help", "--help":
			io.WriteString(stdout, helpOfHelp)
			return exitOK
		default:
			code := exitOK
			return unknownCommand(newRoot(ctx, stdout, stderr, &code), args[1], stderr)
		}
	}
	name, globals, rest, err := hoistGlobals(args)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap: %v\n", err)
		return exitUsage
	}
	if name == "help" { // agentmap --data-dir D help list, or --help with no command
		rest = slices.DeleteFunc(rest, func(a string) bool { return a == "--help" })
		return runCLI(ctx, append([]string{"help"}, rest...), stdout, stderr)
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
		rest = placeGlobals(c, globals, rest)
		if err := checkGlobals(c, rest); err != nil {
			fmt.Fprintf(stderr, "agentmap %s: %v\n", name, err)
			return exitUsage
		}
		if f, ok := unknownFlag(c, rest); ok {
			fmt.Fprintf(stderr, "agentmap %s: %s\nsee agentmap %s --help for the flags it takes\n", name, unknownFlagProblem(f), name)
			return exitUsage
		}
		if f, ok := missingValue(c, rest); ok {
			fmt.Fprintf(stderr, "agentmap %s: %s needs a value (see agentmap help %s)\n", name, flagSpelling(f), name)
			return exitUsage
		}
	case name == "completion":
		rest = append(globals, rest...)
		if err := checkCompletion(rest); err != nil {
			fmt.Fprintf(stderr, "agentmap completion: %v\n", err)
			return exitUsage
		}
	case name == "package-files" || strings.HasPrefix(name, cobra.ShellCompRequestCmd):
		// Completion offers a command's flags through completeArgs alone,
		// from its help: cobra adds no flag of its own to the list.
		rest = append(globals, rest...)
		if name != "package-files" {
			rest = completionRequest(rest)
		}
	default:
		return unknownCommand(root, name, stderr)
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

// interspersed moves flags after the positional arguments in front of
// them, so that `show ID --json` works as `show --json ID` and `build
// FILE -o DIR` as `build -o DIR FILE`: the standard library's flag package
// stops at the first argument that is not a flag, and every command parses
// its own flags with it. What follows `--` stays positional, as does `-`
// (standard input or output).
func interspersed(fl *flag.FlagSet, args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fl.Lookup(name); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			if i+1 == len(args) {
				// The flag's value is missing: given last, with nothing
				// after it, so that the flag package says so rather than
				// take the "--" added below for the value.
				return flags
			}
			i++
			flags = append(flags, args[i])
		}
	}
	return append(flags, append([]string{"--"}, rest...)...)
}

// unexpectedArgs reports, with the command's usage, an argument given to
// a command that takes none, naming it: a usage alone left the user to
// guess which word was wrong.
func unexpectedArgs(fl *flag.FlagSet, name string, stderr io.Writer) bool {
	if fl.NArg() == 0 {
		return false
	}
	// One line, as extraArgument's: the usage after it buried the word
	// that was one too many.
	fmt.Fprintf(stderr, "agentmap %s: unexpected argument %q (%s takes no arguments, only flags; see agentmap help %s)\n", name, fl.Arg(0), name, name)
	return true
}

// extraArgument reports, in one line, an argument beyond the n a command
// takes, naming it and what the command takes: its usage alone left the
// user to guess which word was one too many.
func extraArgument(fl *flag.FlagSet, name string, n int, takes string, stderr io.Writer) bool {
	if fl.NArg() <= n {
		return false
	}
	fmt.Fprintf(stderr, "agentmap %s: unexpected argument %q (%s takes %s; see agentmap help %s)\n", name, fl.Arg(n), name, takes, name)
	return true
}

// outputDirExists checks that the directory an output file goes into is
// there, and says so when it is not: build, export and report write a
// named file only where the user has made room for it, so a typo in a
// path is an error, not a new directory tree.
func outputDirExists(cmd, flagName, out string, stderr io.Writer) bool {
	dir := filepath.Dir(out)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "agentmap %s: %s %s: the directory %s does not exist (create it first)\n", cmd, flagName, out, dir)
		return false
	}
	return true
}

// counted writes n and its noun, singular for one: "1 session", "2 sessions".
func counted(n int, noun string) string { return words.Counted(n, noun) }

// isAre is "is one" for one, "are many" otherwise: "1 file … is a log",
// "3 files … are logs".
func isAre(n int, one, many string) string {
	if n == 1 {
		return "is " + one
	}
	return "are " + many
}
