// Package docs is what the binary knows of this folder: the grants of the
// team database, which `agentmap sink grants` prints, and where the
// documents its messages name can be read on this machine. A message that
// said only "docs/team-database.md" sent a user of a package to a file
// that exists in the source alone; the packages install the documents the
// messages name (Shipped) under share/doc/agentmap/, and the messages name
// them where they are (Path).
package docs

import (
	_ "embed"
	"os"
	"path/filepath"
)

// Grants is team-database-grants.sql: the privileges of the machines' role
// and of the reporting role, applied by the schema's owner.
//
//go:embed team-database-grants.sql
var Grants string

// The documents messages name, each shipped by the packages and the
// release archives (TestShippedDocumentsAreInEveryPackage).
const (
	TeamDatabase = "team-database.md"
	TeamGrants   = "team-database-grants.sql"
)

// Shipped are the documents a package installs beside the binary.
var Shipped = []string{TeamDatabase, TeamGrants}

// executable is the running binary, resolved through symbolic links
// (Homebrew's bin/agentmap links into its Cellar); a variable for tests.
var executable = func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

// Path names where the document name (one of Shipped) can be read: the
// copy a package installed for this binary (share/doc/agentmap/ under
// its prefix: /usr/share/doc/agentmap for the .deb, the Cellar's for
// Homebrew), or the docs/ folder of the release archive it came in, when
// one is there; otherwise docs/NAME of agentmap's source, which a binary
// built from the source (go install, go build) has no copy of.
func Path(name string) string {
	if exe, err := executable(); err == nil {
		dir := filepath.Dir(exe)
		for _, p := range []string{
			filepath.Join(dir, "..", "share", "doc", "agentmap", name),
			filepath.Join(dir, "docs", name),
		} {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
	}
	return "docs/" + name + " in agentmap's source"
}
