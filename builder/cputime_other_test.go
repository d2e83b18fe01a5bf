//go:build !unix

package builder

func processCPU() (int64, bool) { return 0, false }
