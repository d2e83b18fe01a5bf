package builder

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
)

// ContentHash is the lowercase hex SHA-256 of the canonical JSON of a map
// document without its top-level "contentHash" and without
// "session.cliVersion", so that two producers (or two versions of one) that
// agree on a map agree on its hash. doc is not modified. Decode documents
// with json.Decoder.UseNumber, or plainly: see CanonicalJSON for numbers.
func ContentHash(doc map[string]any) (string, error) {
	stripped := maps.Clone(doc)
	delete(stripped, "contentHash")
	if s, ok := stripped["session"].(map[string]any); ok {
		s = maps.Clone(s)
		delete(s, "cliVersion")
		stripped["session"] = s
	}
	canon, err := CanonicalJSON(stripped)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}
