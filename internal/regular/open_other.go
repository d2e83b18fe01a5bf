//go:build !unix

package regular

import "os"

// Open opens a regular file for reading and refuses anything else with a
// *NotRegularError inside an *fs.PathError. Without named pipes in the
// file system (Windows keeps them apart) an open does not block; what it
// opened is checked after.
func Open(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: &NotRegularError{Kind: Kind(fi.Mode())}}
	}
	return f, nil
}
