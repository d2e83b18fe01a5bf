// Package cdp drives a headless Chromium over the Chrome DevTools Protocol
// for the report's browser tests: it launches the browser with a fresh
// profile, speaks the protocol over the browser's websocket (RFC 6455,
// client side, on the standard library) and attaches to one page in
// flattened session mode.
//
// It is a few hundred lines instead of a dependency because the tests need
// a dozen commands and their events, and the library clients (chromedp)
// bring the generated bindings of the whole protocol into the module for
// that.
package cdp

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Find returns the Chromium to use: $AGENTMAP_CHROMIUM, else the first of
// the usual names on PATH or /usr/bin/chromium.
func Find() (string, error) {
	if p := os.Getenv("AGENTMAP_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	return "", errors.New("no Chromium found (install the chromium package, or set AGENTMAP_CHROMIUM)")
}

// Flags are the launch flags: headless, no sandbox (CI runs as root), and
// nothing that would reach the network on its own.
var Flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars"}

// Browser is a running Chromium and the protocol connection to it.
type Browser struct {
	cmd  *exec.Cmd
	conn *wsConn

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan reply
	subs    []func(Event)
	done    chan struct{}
	err     error
}

// Event is a protocol event.
type Event struct {
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
}

type reply struct {
	Result json.RawMessage
	Err    error
}

// Launch starts Chromium with a new empty profile in profileDir.
func Launch(ctx context.Context, bin, profileDir string) (*Browser, error) {
	args := append(append([]string{}, Flags...), "--user-data-dir="+profileDir, "--remote-debugging-port=0", "about:blank")
	cmd := exec.Command(bin, args...)
	inGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "DevTools listening on "); i >= 0 && !sent {
				found <- strings.TrimSpace(line[i+len("DevTools listening on "):])
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	var wsURL string
	select {
	case u, ok := <-found:
		if !ok {
			killGroup(cmd)
			cmd.Wait()
			return nil, errors.New("chromium exited before listening for DevTools")
		}
		wsURL = u
	case <-time.After(30 * time.Second):
		killGroup(cmd)
		cmd.Wait()
		return nil, errors.New("chromium did not announce its DevTools endpoint within 30s")
	case <-ctx.Done():
		killGroup(cmd)
		cmd.Wait()
		return nil, ctx.Err()
	}
	conn, err := dialWS(ctx, wsURL)
	if err != nil {
		killGroup(cmd)
		cmd.Wait()
		return nil, err
	}
	b := &Browser{cmd: cmd, conn: conn, pending: map[int64]chan reply{}, done: make(chan struct{})}
	go b.readLoop()
	return b, nil
}

// Close asks the browser to quit, as a user closing it would, so that it
// ends its children and lets go of its profile; after a few seconds, or
// if it cannot be asked, it is killed with its whole process group.
func (b *Browser) Close() {
	exited := make(chan struct{})
	go func() { b.cmd.Wait(); close(exited) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// It may close the connection before it answers: wait for the exit
	// whatever the call returns.
	_ = b.Call(ctx, "", "Browser.close", nil, nil)
	select {
	case <-exited:
	case <-ctx.Done():
	}
	b.conn.close()
	killGroup(b.cmd) // what is left of the group, the main process too
	<-exited
}

// Subscribe calls f for every event (from the reading goroutine).
func (b *Browser) Subscribe(f func(Event)) {
	b.mu.Lock()
	b.subs = append(b.subs, f)
	b.mu.Unlock()
}

func (b *Browser) readLoop() {
	defer close(b.done)
	for {
		msg, err := b.conn.read()
		if err != nil {
			b.mu.Lock()
			b.err = err
			for id, ch := range b.pending {
				ch <- reply{Err: fmt.Errorf("connection closed: %w", err)}
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var m struct {
			ID     int64           `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
			Event
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				r := reply{Result: m.Result}
				if m.Error != nil {
					r.Err = fmt.Errorf("%d %s", m.Error.Code, m.Error.Message)
				}
				ch <- r
			}
			continue
		}
		b.mu.Lock()
		subs := append([]func(Event){}, b.subs...)
		b.mu.Unlock()
		for _, f := range subs {
			f(m.Event)
		}
	}
}

// Call sends one command (to a page when session is set) and decodes its
// result into out (when not nil).
func (b *Browser) Call(ctx context.Context, session, method string, params any, out any) error {
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return b.err
	}
	b.nextID++
	id := b.nextID
	ch := make(chan reply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if err := b.conn.write(raw); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return fmt.Errorf("%s: %w", method, r.Err)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Page is one tab, attached in flattened mode.
type Page struct {
	B       *Browser
	Session string
}

// NewPage opens a blank tab and attaches to it.
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &t); err != nil {
		return nil, err
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &a); err != nil {
		return nil, err
	}
	return &Page{B: b, Session: a.SessionID}, nil
}

// Call sends a command to the page.
func (p *Page) Call(ctx context.Context, method string, params, out any) error {
	return p.B.Call(ctx, p.Session, method, params, out)
}

// Eval evaluates a JavaScript expression (awaiting a promise) and decodes
// its value into out.
func (p *Page) Eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.Call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("evaluate %q: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, out)
	}
	return nil
}

// WaitFor polls expr until it is true.
func (p *Page) WaitFor(ctx context.Context, expr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var ok bool
		err := p.Eval(ctx, "!!("+expr+")", &ok)
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("waiting for %s: %w", expr, err)
			}
			return fmt.Errorf("waiting for %s: not true after %s", expr, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Mouse dispatches a mouse event of type (mouseMoved, mousePressed,
// mouseReleased, mouseWheel) at x, y.
func (p *Page) Mouse(ctx context.Context, typ string, x, y float64, extra map[string]any) error {
	params := map[string]any{"type": typ, "x": x, "y": y}
	for k, v := range extra {
		params[k] = v
	}
	return p.Call(ctx, "Input.dispatchMouseEvent", params, nil)
}

// Click presses and releases the left button at x, y.
func (p *Page) Click(ctx context.Context, x, y float64) error {
	if err := p.Mouse(ctx, "mouseMoved", x, y, nil); err != nil {
		return err
	}
	if err := p.Mouse(ctx, "mousePressed", x, y, map[string]any{"button": "left", "clickCount": 1}); err != nil {
		return err
	}
	return p.Mouse(ctx, "mouseReleased", x, y, map[string]any{"button": "left", "clickCount": 1})
}

// Screenshot captures the page (the full scrollable height when full).
func (p *Page) Screenshot(ctx context.Context, full bool) ([]byte, error) {
	params := map[string]any{"format": "png", "captureBeyondViewport": full}
	if full {
		var m struct {
			CSS struct {
				Width  float64 `json:"width"`
				Height float64 `json:"height"`
			} `json:"cssContentSize"`
		}
		if err := p.Call(ctx, "Page.getLayoutMetrics", nil, &m); err != nil {
			return nil, err
		}
		params["clip"] = map[string]any{"x": 0, "y": 0, "width": m.CSS.Width, "height": m.CSS.Height, "scale": 1}
	}
	var r struct {
		Data string `json:"data"`
	}
	if err := p.Call(ctx, "Page.captureScreenshot", params, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}

// ---- websocket (client side of RFC 6455) ----

type wsConn struct {
	c   net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
}

func dialWS(ctx context.Context, raw string) (*wsConn, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "ws" {
		return nil, fmt.Errorf("bad DevTools URL %q", raw)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	keyRaw := make([]byte, 16)
	rand.Read(keyRaw)
	key := base64.StdEncoding.EncodeToString(keyRaw)
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 1<<16)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		c.Close()
		return nil, fmt.Errorf("websocket handshake: %s", resp.Status)
	}
	return &wsConn{c: c, r: br}, nil
}

func (w *wsConn) close() { w.c.Close() }

// write sends one masked text frame.
func (w *wsConn) write(payload []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	hdr := []byte{0x81}
	n := len(payload)
	switch {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := make([]byte, 4)
	rand.Read(mask)
	hdr = append(hdr, mask...)
	buf := make([]byte, len(hdr)+n)
	copy(buf, hdr)
	for i, c := range payload {
		buf[len(hdr)+i] = c ^ mask[i%4]
	}
	_, err := w.c.Write(buf)
	return err
}

func (w *wsConn) control(op byte, payload []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	mask := make([]byte, 4)
	rand.Read(mask)
	buf := append([]byte{0x80 | op, 0x80 | byte(len(payload))}, mask...)
	for i, c := range payload {
		buf = append(buf, c^mask[i%4])
	}
	_, err := w.c.Write(buf)
	return err
}

// read returns the next complete data message.
func (w *wsConn) read() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.r, h[:]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		var mask []byte
		if h[1]&0x80 != 0 {
			mask = make([]byte, 4)
			if _, err := io.ReadFull(w.r, mask); err != nil {
				return nil, err
			}
		}
		if n > 1<<30 {
			return nil, errors.New("websocket frame too large")
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(w.r, payload); err != nil {
			return nil, err
		}
		for i := range payload {
			if mask != nil {
				payload[i] ^= mask[i%4]
			}
		}
		switch op {
		case 0x8: // close
			return nil, io.EOF
		case 0x9: // ping
			if err := w.control(0xA, payload); err != nil {
				return nil, err
			}
			continue
		case 0xA: // pong
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}
