package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/mattn/go-isatty"

	"github.com/agentmap/agentmap/state/durable"
)

// outWriter is standard output as the commands see it. Most commands
// print with fmt.Fprint* and never look at the error: without this, a
// full disk (agentmap list --json > f) left a truncated file behind an
// exit status of 0. It keeps the first write error, writes nothing after
// it (half a line after a lost block would only mislead), and runCLI
// turns that error into a failure once the command returns.
type outWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err *outputError
}

func (o *outWriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.err = &outputError{err: err}
		return n, o.err
	}
	return n, nil
}

// failed is the first write error, nil while every write went through.
func (o *outWriter) failed() *outputError {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// outputError is a failed write to standard output. Its text is the one
// message a failed write gets ("writing output: ..."), whoever prints it;
// it remembers being printed, so that runCLI does not print a second
// message after a command (build -o -, report -o -) that already said so.
type outputError struct {
	err  error
	told atomic.Bool
}

func (e *outputError) Error() string {
	e.told.Store(true)
	return "writing output: " + e.err.Error()
}

func (e *outputError) Unwrap() error { return e.err }

// wrapStdout wraps w for runCLI. A terminal does not fill up, but what the
// commands print there names repositories and files, whose names may hold
// control sequences (an escape that clears the screen or sets the
// window's title): a terminal gets terminalSafe, which escapes them and
// still shows the terminal behind it (Fd: export refuses to spray a
// bundle on it, logs hands it to journalctl). Anything else is an
// outWriter.
func wrapStdout(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return &terminalSafe{f: f}
	}
	return &outWriter{w: w}
}

// outputFailed reports a failed write to stdout once, naming the command,
// unless the command has reported it already; the exit code is then
// exitFailure, or the command's own when it failed already.
func outputFailed(stdout io.Writer, name string, code int, stderr io.Writer) int {
	o, ok := stdout.(*outWriter)
	if !ok {
		return code
	}
	err := o.failed()
	if err == nil {
		return code
	}
	if !err.told.Load() {
		prefix := "agentmap"
		if name != "" {
			prefix += " " + name
		}
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
	}
	if code == exitOK {
		return exitFailure
	}
	return code
}

// terminalSafe is stderr as the commands write it: what they say names
// files, and a file name may hold control sequences (an escape that
// recolours the terminal, sets its title or moves its cursor) that a
// message must not play on the user's terminal. Control bytes other than
// newline and tab, and the C1 controls of UTF-8, are written as \xNN; a
// carriage return passes only where a progress bar redraws with it (the
// first byte of a write) or before a newline, so that a name holding one
// cannot overwrite what its line said; everything else passes as it is.
// A write that ends with the first byte of a C1 control's two (a buffered
// writer cut a long message there) keeps it back for the next write, so
// that the control is seen whole and escaped. Fd lets a command still see
// a terminal behind it.
type terminalSafe struct {
	f    *os.File
	mu   sync.Mutex
	held bool // a 0xc2 ended the last write and is not written yet
}

func (t *terminalSafe) Fd() uintptr { return t.f.Fd() }

func (t *terminalSafe) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil // a byte held stays held: an empty write comes between two halves too
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	joined := false
	if t.held {
		if p[0] >= 0x80 && p[0] <= 0xbf {
			p, joined = append([]byte{0xc2}, p...), true // the rune's two bytes together
		} else if err := t.write([]byte{0xc2}); err != nil {
			return 0, err
		}
		t.held = false
	}
	hold := p[len(p)-1] == 0xc2
	if hold {
		p = p[:len(p)-1]
	}
	if err := t.write(p); err != nil {
		// Nothing of p was taken: a write again brings its last byte
		// back, and the byte held before it is held still.
		t.held = joined
		return 0, err
	}
	t.held = hold
	return n, nil
}

// flush writes a byte still held when the command ends: a character cut
// short, escaped as the invalid byte it is.
func (t *terminalSafe) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.held = false
		t.f.Write([]byte(`\xc2`))
	}
}

// write writes p with its control bytes escaped.
func (t *terminalSafe) write(p []byte) error {
	if !needsEscape(p) {
		_, err := t.f.Write(p)
		return err
	}
	out := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f: // U+0080..U+009F
			out = fmt.Appendf(out, `\u%04x`, p[i+1])
			i++
		case c < 0x20 && c != '\n' && c != '\t' && !(c == '\r' && carriageReturnAllowed(p, i)) || c == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, c)
		default:
			out = append(out, c)
		}
	}
	_, err := t.f.Write(out)
	return err
}

func needsEscape(p []byte) bool {
	for i, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' && !(c == '\r' && carriageReturnAllowed(p, i)) || c == 0x7f || c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f {
			return true
		}
	}
	return false
}

// carriageReturnAllowed: the carriage return at p[i] opens the write (a
// progress bar going back to the start of its line) or ends a line.
func carriageReturnAllowed(p []byte, i int) bool {
	return i == 0 || i+1 < len(p) && p[i+1] == '\n'
}

// fdOf is the file descriptor behind w, if there is one (a file, or
// terminalSafe's).
func fdOf(w io.Writer) (uintptr, bool) {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		return f.Fd(), true
	}
	return 0, false
}

// writeOutput is durable.WriteOutput (mode 0600) that a signal stops when
// target is written through (a FIFO, a device): opening a FIFO no one
// reads blocks in the open itself, which nothing interrupts, and the
// command would wait for a reader through every Ctrl-C and SIGTERM. The
// open is left to its goroutine, and the command ends with the signal. A
// file is written as it is: its write does not wait on anyone.
func writeOutput(ctx context.Context, target string, data []byte) error {
	if !durable.WritesThrough(target) {
		return durable.WriteOutput(target, data, 0o600)
	}
	done := make(chan error, 1)
	go func() { done <- durable.WriteOutput(target, data, 0o600) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("write %s: stopped while waiting for something to read it", target)
	}
}
