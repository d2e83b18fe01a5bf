// Command notices writes the licenses of everything linked into the
// agentmap binary: the Go standard library and every module the build of
// ./cmd/agentmap takes a package from, each with the license, notice and
// patent files its module ships, word for word. Binary distributions (the
// .deb, the release archives) carry it: the MIT, BSD and Apache licenses of
// those modules ask that their notices go with the binary.
//
//	go run ./scripts/notices [-o FILE] [-os GOOS] [-arch GOARCH] [PACKAGE]
//
// The modules are those of the build for -os and -arch (by default the
// host's): flags, not GOOS and GOARCH, which would make go run build this
// command for the target instead of running it. A module whose folder holds no license file is an error, so that
// a new dependency cannot ship without its notice.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
)

func main() {
	out := flag.String("o", "-", "the file to write (- for standard output)")
	goos := flag.String("os", runtime.GOOS, "the GOOS of the build")
	goarch := flag.String("arch", runtime.GOARCH, "the GOARCH of the build")
	flag.Parse()
	pkg := "./cmd/agentmap"
	if flag.NArg() > 0 {
		pkg = flag.Arg(0)
	}
	mods, err := linkedModules(pkg, *goos, *goarch)
	if err == nil {
		var text []byte
		if text, err = notices(mods); err == nil {
			err = write(*out, text)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "notices:", err)
		os.Exit(1)
	}
}

// module is one body of code linked into the binary and the folder its
// license files are in.
type module struct {
	Path, Version, Dir string
}

// linkedModules asks go list for the modules of pkg's dependencies on
// goos/goarch (the
// main module left out: its LICENSE ships beside the binary already), with
// the standard library first.
func linkedModules(pkg, goos, goarch string) ([]module, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=Standard,Module", pkg)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	std := false
	seen := map[string]module{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		var p struct {
			Standard bool
			Module   *struct {
				Path, Version, Dir string
				Main               bool
				Replace            *struct{ Path, Version, Dir string }
			}
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list %s: %v", pkg, err)
		}
		switch m := p.Module; {
		case p.Standard:
			std = true
		case m == nil || m.Main:
		case m.Replace != nil:
			seen[m.Path] = module{Path: m.Path, Version: m.Replace.Version, Dir: m.Replace.Dir}
		default:
			seen[m.Path] = module{Path: m.Path, Version: m.Version, Dir: m.Dir}
		}
	}
	var mods []module
	if std {
		// The toolchain go list ran (GOTOOLCHAIN may pick another than
		// the one running this), which is the one that builds.
		env, err := exec.Command("go", "env", "GOROOT", "GOVERSION").Output()
		if err != nil {
			return nil, fmt.Errorf("go env: %v", err)
		}
		lines := strings.Fields(string(env))
		if len(lines) != 2 {
			return nil, fmt.Errorf("go env GOROOT GOVERSION: %q", env)
		}
		mods = append(mods, module{Path: "Go standard library", Version: lines[1], Dir: lines[0]})
	}
	rest := make([]module, 0, len(seen))
	for _, m := range seen {
		rest = append(rest, m)
	}
	slices.SortFunc(rest, func(a, b module) int { return strings.Compare(a.Path, b.Path) })
	return append(mods, rest...), nil
}

// licenseFile matches the names modules give their license texts (LICENSE,
// LICENSE.md, LICENSE-SQLITE, COPYING, NOTICE, PATENTS) and the AUTHORS
// file their copyright lines refer to ("The Go Authors").
var licenseFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice|patents|authors)([-._].*)?$`)

// notices is the text: a heading per module, then each of its license
// files under its name.
func notices(mods []module) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("The agentmap binary links the code below. Each part's license files\n" +
		"follow it as it ships them. agentmap itself: the Apache License 2.0 (LICENSE).\n")
	var missing []string
	for _, m := range mods {
		files, err := licenseFiles(m.Dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", m.Path, err)
		}
		if len(files) == 0 {
			missing = append(missing, m.Path)
			continue
		}
		fmt.Fprintf(&b, "\n%s\n%s %s\n%s\n", strings.Repeat("=", 72), m.Path, m.Version, strings.Repeat("=", 72))
		for _, f := range files {
			text, err := os.ReadFile(filepath.Join(m.Dir, f))
			if err != nil {
				return nil, fmt.Errorf("%s: %v", m.Path, err)
			}
			fmt.Fprintf(&b, "\n--- %s ---\n\n", f)
			b.Write(bytes.TrimRight(text, "\n"))
			b.WriteByte('\n')
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no license file found for %s", strings.Join(missing, ", "))
	}
	return b.Bytes(), nil
}

// licenseFiles lists the license files in a module's top folder, sorted.
func licenseFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && licenseFile.MatchString(e.Name()) {
			files = append(files, e.Name())
		}
	}
	return files, nil
}

func write(path string, text []byte) error {
	if path == "-" {
		_, err := os.Stdout.Write(text)
		return err
	}
	return os.WriteFile(path, text, 0o644)
}
