package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmap/agentmap/builder/validate"
	"github.com/agentmap/agentmap/report"
)

func cmdValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("validate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	quiet := fl.Bool("q", false, "print only problems")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap validate [-q] FILE|DIR...")
		fmt.Fprintln(stderr, "Checks maps (.json or .json.gz) against the agentplay/v1 schema and the")
		fmt.Fprintln(stderr, "machine-checkable rules of the redaction contract; a directory: every map file in it and below;")
		fmt.Fprintln(stderr, "a bundle or a jsonl export (agentmap export): every map in it.")
		fmt.Fprintln(stderr, "Exit 1 if any fails, or if a directory holds no map file.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "agentmap validate: name the map files to check (FILE.json.gz or FILE.json, or a directory of them; see agentmap help validate)")
		return exitUsage
	}
	bad, files, empty := 0, 0, 0
	check := func(path string) {
		files++
		if !validateFile(path, *quiet, stdout, stderr) {
			bad++
		}
	}
	for _, path := range fl.Args() {
		fi, err := os.Stat(path)
		if err == nil && fi.Mode().IsRegular() {
			// What export writes: every map of a bundle or of a jsonl
			// export, as usage and report read them.
			var each func(func(string, []byte) bool) error
			switch {
			case strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz") || isBundle(path):
				each = report.Bundle(path).Raw
			case strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".jsonl.gz") || report.IsLines(path):
				each = report.Lines(path).Raw
			}
			if each != nil {
				n := 0
				err := each(func(name string, data []byte) bool {
					n++
					files++
					if !validateData(name, data, *quiet, stdout) {
						bad++
					}
					return true
				})
				switch {
				case err != nil:
					fmt.Fprintf(stderr, "agentmap validate: %v\n", err)
					files, bad = files+1, bad+1
				case n == 0:
					fmt.Fprintf(stderr, "agentmap validate: %s: no map in it: nothing checked there\n", path)
					empty++
				}
				continue
			}
		}
		if err != nil || !fi.IsDir() {
			check(path)
			continue
		}
		// A directory: every map file in it and below, as build -o DIR
		// and the store keep them (report --maps takes one too).
		found, err := mapFilesIn(path)
		for _, f := range found {
			check(f)
		}
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "%s: %v\n", path, err)
			files, bad = files+1, bad+1
		case len(found) == 0:
			// Not a file that failed, but nothing to check where one was
			// asked for: a wrong path or a build that wrote nothing,
			// which must not pass a check in silence.
			fmt.Fprintf(stderr, "agentmap validate: %s: no map file in it or below (.json.gz or .json): nothing checked there\n", path)
			empty++
		}
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "agentmap validate: %d of %s failed\n", bad, counted(files, "file"))
	}
	if bad > 0 || empty > 0 {
		return exitFailure
	}
	return exitOK
}

// validateFile checks one map file and prints its problems, or ok unless
// quiet; it reports whether the map passed.
func validateFile(path string, quiet bool, stdout, stderr io.Writer) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap validate: %s: %v\n", path, describeOpenError(err))
		return false
	}
	return validateData(path, data, quiet, stdout)
}

// validateData checks one map's bytes (gzipped or not), named name in what
// it prints: its problems, or ok unless quiet.
func validateData(path string, data []byte, quiet bool, stdout io.Writer) bool {
	problems := validate.Map(data)
	for _, p := range problems {
		if p.Path == "" { // the file as a whole (not JSON, not a map)
			fmt.Fprintf(stdout, "%s: %s: %s\n", path, p.Rule, p.Message)
			continue
		}
		fmt.Fprintf(stdout, "%s: %s: %s: %s\n", path, p.Path, p.Rule, p.Message)
	}
	if len(problems) == 0 && !quiet {
		fmt.Fprintf(stdout, "%s: ok\n", path)
	}
	return len(problems) == 0
}

// mapFilesIn lists the map files (.json.gz, .json) in dir and below, in
// lexical order; symbolic links to directories are not followed. A
// subdirectory that cannot be read is an error, after the files found.
func mapFilesIn(dir string) ([]string, error) {
	var out []string
	var firstErr error
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return nil
		}
		// Regular files only: a named pipe met on the walk would hold
		// validate for good (one named as an argument is read: it may be
		// a process substitution).
		// An unpacked bundle's manifest.json is no map (its maps beside
		// it are checked).
		if d.Type().IsRegular() && (strings.HasSuffix(p, ".json.gz") || strings.HasSuffix(p, ".json")) && d.Name() != "manifest.json" {
			out = append(out, p)
		}
		return nil
	})
	return out, firstErr
}
