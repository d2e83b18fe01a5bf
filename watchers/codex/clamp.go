package codex

import "encoding/json"

// maxTokenCount caps one token count as read: a trillion tokens is far
// beyond any real session, and sums of such counts cannot overflow int64.
const maxTokenCount = 1 << 40

// UnmarshalJSON reads a usage as the log has it, then clamps counts that
// cannot be: a negative count becomes 0 and a huge one maxTokenCount, so
// that a damaged or hostile log still gives a map that validates (the
// daemon and `agentmap build` read it the same way). A count that is not
// an integer at all fails the line, as before. Every count field belongs
// in the list below.
func (u *tokenUsage) UnmarshalJSON(b []byte) error {
	type plain tokenUsage
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*u = tokenUsage(p)
	u.clamp()
	return nil
}

func (u *tokenUsage) clamp() {
	for _, c := range []*int64{&u.Input, &u.Cached, &u.CacheWrite, &u.Output} {
		*c = min(max(*c, 0), maxTokenCount)
	}
}
