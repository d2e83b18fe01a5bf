package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLinks is how many symbolic links CreateOutput follows from one name
// before it gives up, as the kernel does (ELOOP) for a loop.
const maxLinks = 40

// CreateOutput starts a write of a file the user named, such as an export
// or a report, which is written where the name leads, as the shell's
// `> PATH` would write it, rather than where agentmap keeps its own files:
//
//   - a symbolic link is followed, to the end of its chain, and the
//     regular file it leads to is replaced atomically as Create replaces
//     its target (the link stays a link; a link to no file yet makes that
//     file);
//   - an existing file that is not a regular file (a character or block
//     device, a FIFO, such as /dev/null or the /dev/fd/63 of the shell's
//     `>(...)`) is opened and written through: no temporary file, no
//     rename and no sync, which a device or a pipe cannot take. Its reader
//     sees the data as it is written, and an error (a full device) is
//     returned by Write or Commit; Abort cannot take back what was
//     written. Opening a FIFO waits for its reader (a first Ctrl-C
//     cannot end that wait, a second one ends the process: see main);
//   - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are
//     written through the descriptor they name, never opened anew: a
//     file the shell appends to (`>> log`) is appended to, not emptied
//     or replaced;
//   - a directory is an error.
//
// Create itself follows no link at the target: agentmap's files in its
// data directory are replaced where they are, never written through a
// link to somewhere else.
func CreateOutput(target string, perm fs.FileMode) (*File, error) {
	if fd, ok := inheritedFD(target); ok {
		// /dev/stdout and its kin: the descriptor the shell handed over,
		// not a file opened anew by its name (see inheritedFD).
		return writeInherited(target, fd)
	}
	// The kernel follows the links first: the links of /proc (/dev/fd/N,
	// /dev/stdout) name no file that a path could reach again, and only
	// the kernel can open what they lead to.
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("write %s: is a directory", target)
	case err == nil && !fi.Mode().IsRegular():
		return writeThrough(target)
	}
	p, lerr := followLinks(target)
	if lerr != nil {
		return nil, fmt.Errorf("write %s: %w", target, lerr)
	}
	if err == nil {
		if pi, err := os.Stat(p); err != nil || !os.SameFile(fi, pi) {
			// A link of /proc to a regular file, whose text is no path
			// to it (a deleted file): only writing through reaches it.
			return writeThrough(target)
		}
	}
	// A regular file, or none (Create makes it, or says why not).
	f, err := Create(p, perm)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", target, errors.Unwrap(err))
	}
	f.named = target
	return f, nil
}

// WritesThrough reports whether CreateOutput writes target through rather
// than making or replacing a regular file there: a name of one of the
// process's own descriptors (/dev/stdout, /dev/fd/N), or an existing file
// that is neither a regular file nor a directory (a device, a FIFO). A
// command that reads a kind of output from its name (build -o: a map file
// by .json.gz, else a directory) takes such a target for one file,
// whatever it is called.
func WritesThrough(target string) bool {
	if _, ok := inheritedFD(target); ok {
		return true
	}
	fi, err := os.Stat(target)
	return err == nil && !fi.IsDir() && !fi.Mode().IsRegular()
}

// writeThrough opens an existing file for writing, as the shell's `>`
// does: without O_CREATE, and with no O_TRUNC, which a device or a FIFO
// takes in ways of its own; a regular file (one that took the place of a
// device since, or one behind a link of /proc) is emptied instead.
func writeThrough(target string) (*File, error) {
	w, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", target, err)
	}
	if fi, err := w.Stat(); err == nil && fi.Mode().IsRegular() {
		if err := w.Truncate(0); err != nil {
			w.Close()
			return nil, fmt.Errorf("write %s: %w", target, err)
		}
	}
	return &File{target: target, tmp: w, direct: true}, nil
}

// WriteOutput writes data to a file the user named, as CreateOutput
// writes it.
func WriteOutput(target string, data []byte, perm fs.FileMode) error {
	f, err := CreateOutput(target, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err // it names target
	}
	return f.Commit()
}

// followLinks returns where target leads: the first name of its chain of
// symbolic links that is not a link, or does not exist, in a directory
// with no link in its path. A relative link is read from its own
// directory, and ".." in it after a link is taken physically, as the
// kernel takes it, not by trimming the name. Target is returned as it is
// when it is no link; when its own directory is missing, Create says so
// (or makes it, as it makes any). A link that leads into a directory that
// is missing, or to a name of a directory, is an error: writing beside the
// link would replace the link.
func followLinks(target string) (string, error) {
	dir, base := splitName(target)
	for hops := 0; ; hops++ {
		if base == "" || base == "." || base == ".." {
			return "", errors.New("is a directory")
		}
		at, err := filepath.EvalSymlinks(dir)
		if err != nil {
			if hops == 0 {
				return target, nil
			}
			return "", err
		}
		p := filepath.Join(at, base)
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			if hops == 0 {
				return target, nil
			}
			return p, nil
		}
		if hops == maxLinks {
			return "", fmt.Errorf("more than %d symbolic links", maxLinks)
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			// Not filepath.Join, which would trim "x/.." by name.
			link = at + string(filepath.Separator) + link
		}
		dir, base = splitName(link)
	}
}

// splitName splits a name before its last element, leaving the directory
// as it was written (with its "..", if any) for EvalSymlinks to resolve.
func splitName(name string) (dir, base string) {
	i := len(name) - 1
	for i >= len(filepath.VolumeName(name)) && !os.IsPathSeparator(name[i]) {
		i--
	}
	dir, base = name[:i+1], name[i+1:]
	if dir == "" {
		dir = "."
	}
	return dir, base
}
