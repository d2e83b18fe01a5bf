//go:build !unix

package watchers

// dirStatter is statFile by the whole path where there is no stat
// relative to a directory (statdir_unix.go).
type dirStatter struct{}

func openDirStatter(string) *dirStatter { return &dirStatter{} }

func (*dirStatter) close() {}

func (*dirStatter) stat(r Root, p, _, form string) (FileStat, bool) { return statFile(r, p, form) }
