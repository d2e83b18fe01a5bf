package state

// mmapReserve is 0 (bbolt's default) on Windows, where bbolt grows the
// file itself to the length it maps: a larger first mapping would be a
// larger file on disk.
func mmapReserve() int { return 0 }
