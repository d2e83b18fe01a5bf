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
	"maps"
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

// module is one body of code linked into the binary: its path and
// version as the binary's build information names them (go version -m),
// the folder its files are in, and the folders of the packages the binary
// takes from it, each of which may ship a license of its own (code a
// module copied in, with its notice beside it: klauspost/compress's xxhash).
type module struct {
	Path, Version, Dir string
	pkgDirs            []string
}

// linkedModules asks go list for the modules of pkg's dependencies on
// goos/goarch, built as the releases are (CGO_ENABLED=0): the main module
// left out (its own license goes with the binary already), the standard
// library first.
func linkedModules(pkg, goos, goarch string) ([]module, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=Dir,Standard,Module", pkg)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	std := false
	seen := map[string]*module{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		var p struct {
			Dir      string
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
		m := p.Module
		switch {
		case p.Standard:
			std = true
			continue
		case m == nil || m.Main:
			continue
		}
		if seen[m.Path] == nil {
			// A replaced module is named as the build information names
			// it (its path and version, then => the replacement); its
			// files are the replacement's.
			dir := m.Dir
			if m.Replace != nil {
				dir = m.Replace.Dir
			}
			seen[m.Path] = &module{Path: m.Path, Version: m.Version, Dir: dir}
		}
		seen[m.Path].pkgDirs = append(seen[m.Path].pkgDirs, p.Dir)
	}
	var mods []module
	if std {
		// The toolchain go list ran (GOTOOLCHAIN may pick another than
		// the one running this), which is the one that builds. Its
		// vendored golang.org/x packages are under the same license.
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
		rest = append(rest, *m)
	}
	slices.SortFunc(rest, func(a, b module) int { return strings.Compare(a.Path, b.Path) })
	return append(mods, rest...), nil
}

// licenseFile matches the names modules give their license texts (LICENSE,
// LICENSE.md, LICENSE-SQLITE, COPYING, NOTICE, PATENTS) and the AUTHORS
// file their copyright lines refer to ("The Go Authors"); never Go source
// (license.go, notice_test.go).
var licenseFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice|patents|authors)([-._].*)?$`)

func isLicenseFile(name string) bool {
	return licenseFile.MatchString(name) && !strings.HasSuffix(name, ".go")
}

// notices is the text: a heading per module, then each of its license
// files under its name relative to the module (LICENSE,
// zstd/internal/xxhash/LICENSE.txt).
func notices(mods []module) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("The agentmap binary links the code below. Each part's license files\n" +
		"follow it as it ships them. agentmap itself is under the Apache License 2.0.\n")
	var missing []string
	for _, m := range mods {
		files, err := licenseFiles(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", m.Path, err)
		}
		if len(files) == 0 || !slices.ContainsFunc(files, func(f string) bool { return !strings.Contains(f, "/") }) {
			// A module's own license is at its top: one only in a
			// folder is the notice of code it copied in.
			missing = append(missing, m.Path)
			continue
		}
		fmt.Fprintf(&b, "\n%s\n%s %s\n%s\n", strings.Repeat("=", 72), m.Path, m.Version, strings.Repeat("=", 72))
		for _, f := range files {
			text, err := os.ReadFile(filepath.Join(m.Dir, filepath.FromSlash(f)))
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

// licenseFiles lists the license files of a module, relative to its folder
// with slashes: those at its top, then those of every folder from a
// linked package's up to the top, each once, sorted.
func licenseFiles(m module) ([]string, error) {
	set := map[string]bool{}
	dirs := map[string]bool{m.Dir: true}
	for _, d := range m.pkgDirs {
		for rel, err := filepath.Rel(m.Dir, d); err == nil && rel != "." && !strings.HasPrefix(rel, ".."); rel = filepath.Dir(rel) {
			dirs[filepath.Join(m.Dir, rel)] = true
		}
	}
	for dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Type().IsRegular() && isLicenseFile(e.Name()) {
				rel, _ := filepath.Rel(m.Dir, filepath.Join(dir, e.Name()))
				set[filepath.ToSlash(rel)] = true
			}
		}
	}
	files := slices.Sorted(maps.Keys(set))
	// The top's first: the module's own license before those of code
	// copied into it.
	slices.SortStableFunc(files, func(a, b string) int {
		return cmpBool(strings.Contains(a, "/"), strings.Contains(b, "/"))
	})
	return files, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func write(path string, text []byte) error {
	if path == "-" {
		_, err := os.Stdout.Write(text)
		return err
	}
	return os.WriteFile(path, text, 0o644)
}
