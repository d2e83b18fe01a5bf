package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// opener is the command that hands a file to the default browser. Tests
// replace it, so that none starts a real browser.
var opener = func(abs string) *exec.Cmd {
	switch runtime.GOOS {
	case "darwin":
		return exec.Command("open", abs)
	case "windows":
		return exec.Command("rundll32", "url.dll,FileProtocolHandler", abs)
	}
	return exec.Command("xdg-open", abs)
}

// openWait bounds the wait for the opener. open, xdg-open and rundll32
// exit as soon as they have handed the file over, and their exit status
// says whether they could: on a machine without a desktop xdg-open exits
// 3 at once. One still running after this has found something to run the
// browser with (xdg-open's fallback runs it in the foreground), and is
// left to run, reaped by the goroutine that waits for it.
var openWait = 3 * time.Second

// openInBrowser opens the file in the default browser. Its error is the
// whole message for the user: why the opener failed, and the file's URL to
// open by hand.
func openInBrowser(file string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("could not open a browser (%v); open %s yourself", err, file)
	}
	cmd := opener(abs)
	name := filepath.Base(cmd.Args[0])
	fail := func(why string) error {
		return fmt.Errorf("could not open a browser (%s: %s); open %s yourself", name, why, fileURL(abs))
	}
	// The opener's output is left out (nil writes to the null device): it
	// repeats the path at most, and a pipe would keep Wait waiting for a
	// browser that inherited it.
	if err := cmd.Start(); err != nil {
		var pe *fs.PathError
		switch {
		case errors.Is(err, exec.ErrNotFound):
			return fail("not found")
		case errors.As(err, &pe):
			return fail(pe.Err.Error())
		}
		return fail(err.Error())
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fail(err.Error())
		}
	case <-time.After(openWait):
	}
	return nil
}

// fileURL is the file:// URL of an absolute path, which a browser's
// address bar takes on every system (C:\r.html is file:///C:/r.html).
func fileURL(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}
