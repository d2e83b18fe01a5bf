package attemptdb

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// Namespace is AttemptDB's UUIDv5 namespace (ATTEMPTDB_NAMESPACE), fixed
// for ever by its specification.
var Namespace = mustParseUUID("3b9ac08e-7f21-4b1d-8e5a-1c2d9f6e4a77")

// Id prefixes of the derivation rule.
const (
	prefixEvent   = "ev_"
	prefixProject = "prj_"
	prefixSession = "ses_"
	prefixSpan    = "spn_"
	prefixAgent   = "agt_"
)

// Derive is AttemptDB's deterministic id: UUIDv5 under Namespace of the
// prefix followed, for each part, by U+001F and the part (no trailing
// separator), as a lowercase hyphenated UUID.
func Derive(prefix string, parts ...string) string {
	var name strings.Builder
	name.WriteString(prefix)
	for _, p := range parts {
		name.WriteByte(0x1f)
		name.WriteString(p)
	}
	return uuid5(Namespace, name.String())
}

// SessionID is the session_id of (provider, provider_session_id); provider
// is normalised first, as the checker does.
func SessionID(provider, providerSessionID string) string {
	return Derive(prefixSession, NormalizeProvider(provider), providerSessionID)
}

// MainAgentID is the agent_id of a session's top-level agent.
func MainAgentID(sessionID string) string { return Derive(prefixAgent, "session", sessionID) }

// SubagentID is the agent_id of a subagent of a session.
func SubagentID(sessionID, providerAgentID string) string {
	return Derive(prefixAgent, "subagent", sessionID, providerAgentID)
}

// RootProjectID is the project_id of a project known by its root (no
// parseable remote): prj_ ␟ "root" ␟ device id ␟ logical root.
func RootProjectID(deviceID, root string) string {
	return Derive(prefixProject, "root", strings.ToLower(deviceID), LogicalRoot(root))
}

// LogicalRoot is AttemptDB's logical form of a root: trimmed, '\' as '/',
// repeated slashes collapsed (a leading // of a UNC path kept), a \\?\
// prefix removed (\\?\UNC\ becomes //) and the drive letter upper-cased.
// The home directory is not replaced and a trailing slash is kept.
func LogicalRoot(root string) string {
	r := strings.TrimSpace(root)
	if rest, ok := strings.CutPrefix(r, `\\?\UNC\`); ok {
		r = `\\` + rest
	} else if rest, ok := strings.CutPrefix(r, `\\?\`); ok {
		r = rest
	}
	r = strings.ReplaceAll(r, `\`, "/")
	unc := strings.HasPrefix(r, "//")
	for strings.Contains(r, "//") {
		r = strings.ReplaceAll(r, "//", "/")
	}
	if unc {
		r = "/" + r
	}
	if len(r) >= 2 && r[1] == ':' && (r[0] >= 'a' && r[0] <= 'z') {
		r = strings.ToUpper(r[:1]) + r[1:]
	}
	return r
}

// rootName is project.name of a root project: its last path segment, or
// "project" when it has none.
func rootName(root string) string {
	r := strings.TrimRight(LogicalRoot(root), "/")
	if i := strings.LastIndexByte(r, '/'); i >= 0 {
		r = r[i+1:]
	}
	if r == "" || strings.HasSuffix(r, ":") {
		return "project"
	}
	return r
}

// NormalizeProvider is the reader's normalisation of provider: trimmed,
// lower case, '-' as '_', and the known aliases.
func NormalizeProvider(p string) string {
	p = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(p)), "-", "_")
	switch p {
	case "claude", "claudecode":
		return "claude_code"
	case "codex_cli":
		return "codex"
	case "gemini":
		return "gemini_cli"
	}
	return p
}

// ProviderOf maps a map's session.agentTool to AttemptDB's provider.
func ProviderOf(agentTool string) string { return NormalizeProvider(agentTool) }

func uuid5(ns [16]byte, name string) string {
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = (u[6] & 0x0f) | 0x50
	u[8] = (u[8] & 0x3f) | 0x80
	return formatUUID(u)
}

func formatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// parseUUID accepts the hyphenated form only (what the schema allows).
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, false
	}
	return u, true
}

func mustParseUUID(s string) [16]byte {
	u, ok := parseUUID(s)
	if !ok {
		panic("bad uuid constant " + s)
	}
	return u
}

// IsUUID reports whether s is a lowercase hyphenated UUID, the only form
// the published schema accepts.
func IsUUID(s string) bool {
	_, ok := parseUUID(s)
	return ok && s == strings.ToLower(s)
}

// isNil reports whether s is the nil UUID (in any case or hyphenation the
// checker accepts).
func isNil(s string) bool {
	s = strings.ReplaceAll(s, "-", "")
	return strings.Trim(s, "0") == "" && len(s) == 32
}

func fmtHexDecode(dst []byte, s string) (int, error) { return hex.Decode(dst, []byte(s)) }
