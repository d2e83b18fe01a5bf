package builder

import (
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

type fileKey struct{ repo, path string }

// catalog assigns repo ids and file ids in order of first use by the kept
// events, and renders paths in the chosen mode.
type catalog struct {
	render  *redact.Renderer
	info    map[string]event.Repo
	repoIDs map[string]string
	repos   []Repo
	fileIDs map[fileKey]int
	files   []File
}

func newCatalog(render *redact.Renderer, info map[string]event.Repo) *catalog {
	return &catalog{render: render, info: info, repoIDs: map[string]string{}, fileIDs: map[fileKey]int{}}
}

// repo returns the id of a repo key, declaring it on first use. A key no
// repo record declared is named by the key itself (an opaque hash).
func (c *catalog) repo(key string) string {
	if id, ok := c.repoIDs[key]; ok {
		return id
	}
	id := "r" + itoa(len(c.repos))
	c.repoIDs[key] = id
	r := Repo{ID: id, Name: key}
	if info, ok := c.info[key]; ok {
		if info.Name != "" {
			r.Name = info.Name
		}
		r.Remote = info.Remote
	}
	c.repos = append(c.repos, r)
	return id
}

// target renders one event target, counting the touch on its file.
func (c *catalog) target(t event.Target, seq int) Target {
	if !isFileTarget(t) {
		label := t.Label
		if label == "" {
			label = "outside-repo"
		}
		return Target{File: -1, Label: label, Touch: t.Touch}
	}
	k := fileKey{t.Repo, t.Path}
	id, ok := c.fileIDs[k]
	if !ok {
		id = len(c.files)
		c.fileIDs[k] = id
		c.files = append(c.files, File{ID: id, Repo: c.repo(t.Repo), Path: c.render.Path(t.Path), First: seq})
	}
	f := &c.files[id]
	switch t.Touch {
	case "read":
		f.Reads++
	case "edit":
		f.Edits++
	case "hit":
		f.Hits++
	}
	if t.Op != "" {
		f.Op = t.Op
	}
	return Target{File: id, Touch: t.Touch, Op: t.Op}
}

// isFileTarget: a repo-relative file. A path without a repo cannot be
// listed in files[] and collapses to the outside-repo bucket.
func isFileTarget(t event.Target) bool { return t.Repo != "" && t.Path != "" }

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
