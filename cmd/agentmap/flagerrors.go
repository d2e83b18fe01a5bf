package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"time"
)

// parseFlags parses args into fl, whose output is the command's stderr
// and whose name is the command's. Help (-h) prints the command's usage,
// as the flag package does. A bad value prints one line that names the
// flag, the value and what the flag wants, and where the flags are told:
// the flag package would print its own wording ("invalid value "x" for
// flag -rescan: parse error", with one dash, where the help spells two)
// and then every flag of the command, burying the one line that matters.
// (Unknown flags and a value missing at the end are caught before the
// command runs: see unknownFlag and missingValue.)
func parseFlags(fl *flag.FlagSet, args []string) error {
	out, full := fl.Output(), fl.Usage
	var said bytes.Buffer
	fl.SetOutput(&said)
	fl.Usage = func() {}
	err := fl.Parse(args)
	fl.SetOutput(out)
	fl.Usage = full
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		if full != nil {
			full()
		} else {
			fl.PrintDefaults()
		}
	default:
		fmt.Fprintf(out, "agentmap %s: %s\nsee agentmap %s --help for the flags it takes\n", fl.Name(), flagProblem(fl, err), fl.Name())
	}
	return err
}

// The flag package's words for a value it could not set, and for a
// boolean's.
var (
	badValue = regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -([^:]+): (.*)$`)
	badBool  = regexp.MustCompile(`^invalid boolean value ("(?:[^"\\]|\\.)*") for -([^:]+): (.*)$`)
)

// flagProblem says what is wrong with a flag's value, in the help's
// spelling (--name, -q), with what the flag takes where its type tells.
func flagProblem(fl *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := badBool.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s takes true or false, not %s (or no value: %s alone is true)", flagSpelling(m[2]), m[1], flagSpelling(m[2]))
	}
	m := badValue.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	value, name, why := m[1], m[2], m[3]
	flagName := flagSpelling(name)
	f := fl.Lookup(name)
	if f == nil {
		return fmt.Sprintf("%s %s: %s", flagName, value, why)
	}
	var kind any
	if g, ok := f.Value.(flag.Getter); ok {
		kind = g.Get()
	}
	outOfRange := why == "value out of range"
	switch kind.(type) {
	case time.Duration:
		return fmt.Sprintf("%s %s is not a duration (want one such as 30s, 5m or 1h30m)", flagName, value)
	case int, int64, uint, uint64:
		if outOfRange {
			return fmt.Sprintf("%s %s is too large", flagName, value)
		}
		return fmt.Sprintf("%s %s is not a whole number", flagName, value)
	case float64:
		if outOfRange {
			return fmt.Sprintf("%s %s is out of range", flagName, value)
		}
		return fmt.Sprintf("%s %s is not a number", flagName, value)
	}
	// A flag of its own type (agent=DIR, a path mode, a format) says
	// itself what it wants.
	return fmt.Sprintf("%s %s: %s", flagName, value, why)
}
