package validate

// Problem is one failed check. Placeholder API until the package lands.
type Problem struct{ Path, Rule, Message string }

// Map checks one map.
func Map(data []byte) []Problem { return nil }
