package durable

import "testing"

// The batch tests again with named temporary files, as on a filesystem
// without unnamed ones (or a system that cannot link them).
func TestWriteFilesNamedTemporaries(t *testing.T) {
	if noTmpfile.Load() {
		t.Skip("unnamed temporary files are off in this process already")
	}
	noTmpfile.Store(true)
	defer noTmpfile.Store(false)
	t.Run("batch", TestWriteFilesBatch)
	t.Run("replaces", TestWriteFilesReplacesAndKeepsModes)
}

// On a filesystem that has them, a batch's files are unnamed until linked:
// no temporary name is ever made.
func TestWriteFilesUnnamedTemporaries(t *testing.T) {
	dir := t.TempDir()
	tf, err := createTemp(dir, "x.json.gz", 0o600, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.discard()
	if !tf.unnamed {
		t.Skipf("no unnamed temporary files here (O_TMPFILE or /proc missing): the named ones are tested")
	}
	if tf.name != "" {
		t.Errorf("an unnamed file has the name %q", tf.name)
	}
}
