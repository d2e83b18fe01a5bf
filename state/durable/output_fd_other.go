//go:build !unix

package durable

// inheritedFD: Windows has no names for a process's descriptors.
func inheritedFD(string) (int, bool) { return 0, false }

func writeInherited(target string, _ int) (*File, error) { return nil, nil }
