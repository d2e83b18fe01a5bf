// Package words holds the small helpers of agentmap's messages that more
// than one package needs, so that a count reads the same everywhere.
package words

import "strconv"

// Counted writes n and its noun, singular for one: "1 session", "2 sessions".
func Counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
