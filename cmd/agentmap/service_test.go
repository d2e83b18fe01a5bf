package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The service commands print their usage once on help; an argument they
// do not take is said in one line, and a bad flag is named, each with a
// pointer to the usage instead of the usage.
func TestServiceCommandsUsageOnce(t *testing.T) {
	for _, name := range []string{"install", "uninstall", "start", "stop", "restart"} {
		for _, args := range [][]string{{"-h"}, {"--help"}, {"--bogus"}, {"extra"}} {
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), append([]string{name}, args...), &stdout, &stderr)
			out := stdout.String() + stderr.String()
			wantUsage := 1
			if args[0] == "extra" {
				wantUsage = 0
			}
			if args[0] == "--bogus" {
				wantUsage = 0
				if want := "agentmap " + name + ": unknown flag --bogus\nsee agentmap " + name + " --help"; !strings.Contains(out, want) {
					t.Errorf("%s %v: %q, want %q", name, args, out, want)
				}
			}
			if n := strings.Count(out, "usage: agentmap "+name); n != wantUsage {
				t.Errorf("%s %v: usage printed %d times: %q", name, args, n, out)
			}
			wantCode := exitUsage
			if strings.HasPrefix(args[0], "-h") || args[0] == "--help" {
				wantCode = exitOK
			}
			if code != wantCode {
				t.Errorf("%s %v: exit %d, want %d", name, args, code, wantCode)
			}
			if args[0] == "extra" && !strings.Contains(stderr.String(), `agentmap `+name+`: unexpected argument "extra"`) {
				t.Errorf("%s %v: %q", name, args, stderr.String())
			}
		}
	}
	// Each usage reads as a sentence, as the others do.
	for _, action := range []string{"start", "stop", "restart"} {
		var stdout, stderr bytes.Buffer
		dispatch(context.Background(), []string{action, "-h"}, &stdout, &stderr)
		want := strings.ToUpper(action[:1]) + action[1:] + "s the installed per-user service."
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("%s -h: %q, want %q", action, stdout.String(), want)
		}
	}
}
