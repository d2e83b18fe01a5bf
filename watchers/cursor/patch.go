package cursor

import "strings"

// patchFile is one file named by a patch header.
type patchFile struct {
	path string
	op   string // create, modify, delete, rename-from, rename-to
}

// patchFiles reads only the file headers of an apply_patch text
// ("*** Add File: p", "*** Update File: p", "*** Delete File: p",
// "*** Move to: p"); the hunks are never looked at.
func patchFiles(patch string) []patchFile {
	var out []patchFile
	for len(patch) > 0 {
		line := patch
		if i := strings.IndexByte(patch, '\n'); i >= 0 {
			line, patch = patch[:i], patch[i+1:]
		} else {
			patch = ""
		}
		if !strings.HasPrefix(line, "*** ") {
			continue
		}
		line = strings.TrimRight(line[4:], "\r ")
		switch {
		case strings.HasPrefix(line, "Add File: "):
			out = append(out, patchFile{path: strings.TrimSpace(line[len("Add File: "):]), op: "create"})
		case strings.HasPrefix(line, "Update File: "):
			out = append(out, patchFile{path: strings.TrimSpace(line[len("Update File: "):]), op: "modify"})
		case strings.HasPrefix(line, "Delete File: "):
			out = append(out, patchFile{path: strings.TrimSpace(line[len("Delete File: "):]), op: "delete"})
		case strings.HasPrefix(line, "Move to: "):
			// The file being updated is renamed: its header named the source.
			if n := len(out); n > 0 && out[n-1].op == "modify" {
				out[n-1].op = "rename-from"
			}
			out = append(out, patchFile{path: strings.TrimSpace(line[len("Move to: "):]), op: "rename-to"})
		}
	}
	return out
}
