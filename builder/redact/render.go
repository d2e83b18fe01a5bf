package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
)

// Mode is a path mode of the format page.
type Mode string

const (
	ModeRelative Mode = "relative"
	ModeDirsOnly Mode = "dirs_only"
	ModeHashed   Mode = "hashed"
)

// Renderer applies a path mode to repo-relative paths when a map is written.
// It is not safe for concurrent use (it reuses one HMAC state).
type Renderer struct {
	mode Mode
	mac  hash.Hash
}

// NewRenderer returns a renderer. Hashed without a key falls back to
// dirs_only; an empty mode is relative; an unknown mode is dirs_only, the
// stronger of the two that need no key.
func NewRenderer(mode Mode, key []byte) *Renderer {
	switch mode {
	case "", ModeRelative:
		return &Renderer{mode: ModeRelative}
	case ModeHashed:
		if len(key) == 0 {
			return &Renderer{mode: ModeDirsOnly}
		}
		return &Renderer{mode: ModeHashed, mac: hmac.New(sha256.New, key)}
	}
	return &Renderer{mode: ModeDirsOnly}
}

// Mode is the mode actually applied (for session.pathMode).
func (r *Renderer) Mode() Mode { return r.mode }

// Path renders one repo-relative path. The repo root (".") stays "." in
// every mode: it names no file.
//   - relative: unchanged;
//   - dirs_only: directories kept, the last segment becomes "•" and the
//     first 6 hex chars of SHA-256 of the whole repo-relative path;
//   - hashed: every segment becomes the first 10 hex chars of
//     HMAC-SHA256(key, segment).
func (r *Renderer) Path(rel string) string {
	if rel == "" || rel == "." {
		return rel
	}
	switch r.mode {
	case ModeDirsOnly:
		sum := sha256.Sum256([]byte(rel))
		name := "•" + hex.EncodeToString(sum[:3])
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			return rel[:i+1] + name
		}
		return name
	case ModeHashed:
		segs := strings.Split(rel, "/")
		for i, s := range segs {
			r.mac.Reset()
			r.mac.Write([]byte(s))
			segs[i] = hex.EncodeToString(r.mac.Sum(nil))[:10]
		}
		return strings.Join(segs, "/")
	}
	return rel
}
