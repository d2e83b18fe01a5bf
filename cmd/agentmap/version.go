package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// version is set by release builds: go build -ldflags "-X main.version=1.2.3".
// Without it the version comes from the build info: the module version that
// `go install …@v1.2.3` records, or, for a build from a checkout, the VCS
// revision and time that the go command stamps into the binary.
var version = ""

// buildVersion is what a binary knows about where it came from.
type buildVersion struct {
	Version   string `json:"version"`            // the release version, or "devel"
	Module    string `json:"module,omitempty"`   // the main module's version, when the go command recorded one
	Revision  string `json:"revision,omitempty"` // vcs.revision
	Time      string `json:"time,omitempty"`     // vcs.time (RFC 3339, UTC)
	Modified  bool   `json:"modified,omitempty"` // vcs.modified: built from a tree with uncommitted changes
	GoVersion string `json:"go"`
	Platform  string `json:"platform"`
}

// readBuildVersion combines the -ldflags value (when set) with the build
// info; info may be nil (a binary built without module support).
func readBuildVersion(ldflags string, info *debug.BuildInfo) buildVersion {
	b := buildVersion{Version: strings.TrimPrefix(ldflags, "v"), GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			b.Module = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
		if info.GoVersion != "" {
			b.GoVersion = info.GoVersion
		}
	}
	if b.Version == "" {
		b.Version = "devel"
		// A tagged module version (go install …@v1.2.3) is a release; a
		// pseudo-version or a +dirty one is a build of a checkout.
		if m := b.Module; m != "" && !strings.Contains(m, "+") && strings.Count(m, "-") < 2 {
			b.Version = strings.TrimPrefix(m, "v")
		}
	}
	return b
}

// short is the one-word version: the release, else devel with the first 12
// characters of the revision (and -dirty for a modified tree). Binaries
// without VCS stamps (test binaries, -buildvcs=false) say just "devel", so
// that what they write stays the same from build to build.
func (b buildVersion) short() string {
	if b.Version != "devel" || b.Revision == "" {
		return b.Version
	}
	rev := b.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if b.Modified {
		rev += "-dirty"
	}
	return "devel+" + rev
}

// long is the line `agentmap version` and `agentmap --version` print.
func (b buildVersion) long() string {
	parts := []string{"agentmap " + b.short()}
	if b.Module != "" && b.Module != "v"+b.Version {
		parts = append(parts, "module "+b.Module)
	}
	if b.Revision != "" {
		rev := "revision " + b.Revision
		if b.Modified {
			rev += " (modified)"
		}
		parts = append(parts, rev)
	}
	if b.Time != "" {
		parts = append(parts, "built from a commit of "+b.Time)
	}
	parts = append(parts, b.GoVersion+" "+b.Platform)
	return strings.Join(parts, ", ")
}

var currentBuild = sync.OnceValue(func() buildVersion {
	info, _ := debug.ReadBuildInfo()
	return readBuildVersion(version, info)
})

func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("version", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print the version, revision, commit time, Go version and platform as JSON")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap version [--json]")
		fmt.Fprintln(stderr, "Prints the version of this binary, from the build's -ldflags value, its module version and VCS stamps.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err)
	}
	if unexpectedArgs(fl, "version", stderr) {
		return exitUsage
	}
	b := currentBuild()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(b)
		return exitOK
	}
	fmt.Fprintln(stdout, b.long())
	return exitOK
}

// producer is session.cliVersion of the maps this binary writes: "agentmap"
// and the short version.
func producer() string { return "agentmap " + currentBuild().short() }

// flagExit is the exit code of a failed flag.Parse: -h asked for help (0),
// anything else is a usage error.
func flagExit(err error) int {
	if err == flag.ErrHelp {
		return exitOK
	}
	return exitUsage
}
