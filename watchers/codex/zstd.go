package codex

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/agentmap/agentmap/watchers"
	"github.com/klauspost/compress/zstd"
)

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// OpenMaybeZstd opens a rollout for streaming. Newer Codex builds replace old
// rollouts by rollout-….jsonl.zst, and the plain file can vanish while that
// happens, so a missing plain file falls back to its .zst twin. Content is
// recognised by the zstd magic rather than the name alone, so a renamed file
// still reads. The decoder runs single-threaded in low-memory mode: memory
// stays bounded by the window, never by the file.
func OpenMaybeZstd(path string) (io.ReadCloser, error) {
	f, err := watchers.OpenLog(path)
	if errors.Is(err, fs.ErrNotExist) && !strings.HasSuffix(path, ".zst") {
		f, err = watchers.OpenLog(path + ".zst")
	}
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(len(zstdMagic))
	if !bytes.Equal(head, zstdMagic) {
		return &readCloser{Reader: br, close: f.Close}, nil
	}
	dec, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("codex: zstd %s: %w", path, err)
	}
	return &readCloser{Reader: dec, close: func() error {
		dec.Close()
		return f.Close()
	}}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r *readCloser) Close() error { return r.close() }
