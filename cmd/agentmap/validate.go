package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentmap/agentmap/builder/validate"
)

func cmdValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("validate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	quiet := fl.Bool("q", false, "print only problems")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap validate [-q] FILE...")
		fmt.Fprintln(stderr, "Checks maps (.json or .json.gz) against the agentplay/v1 schema and the")
		fmt.Fprintln(stderr, "machine-checkable rules of the redaction contract. Exit 1 if any fails.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "agentmap validate: name the map files to check (FILE.json.gz or FILE.json; see agentmap help validate)")
		return exitUsage
	}
	bad := 0
	for _, path := range fl.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", path, describeOpenError(err))
			bad++
			continue
		}
		problems := validate.Map(data)
		for _, p := range problems {
			if p.Path == "" { // the file as a whole (not JSON, not a map)
				fmt.Fprintf(stdout, "%s: %s: %s\n", path, p.Rule, p.Message)
				continue
			}
			fmt.Fprintf(stdout, "%s: %s: %s: %s\n", path, p.Path, p.Rule, p.Message)
		}
		if len(problems) > 0 {
			bad++
		} else if !*quiet {
			fmt.Fprintf(stdout, "%s: ok\n", path)
		}
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "agentmap validate: %d of %s failed\n", bad, counted(fl.NArg(), "file"))
		return exitFailure
	}
	return exitOK
}
