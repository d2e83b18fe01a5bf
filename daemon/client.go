package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Client talks to a running daemon over its control socket.
type Client struct {
	hc *http.Client
}

// Connect returns a client of the daemon serving dataDir, or ErrNoDaemon.
// It checks that the daemon answers.
func Connect(dataDir string) (*Client, error) {
	path := ControlPath(dataDir)
	c, err := dialControl(path)
	if err != nil {
		return nil, err
	}
	c.Close()
	cl := &Client{hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dialControl(path) },
	}}}
	return cl, nil
}

// Status asks the daemon for its status.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	err := c.call(ctx, http.MethodGet, "/v1/status", 10*time.Second, &st)
	return st, err
}

// List asks the daemon for the sessions in the store.
func (c *Client) List(ctx context.Context) ([]Entry, error) {
	var es []Entry
	err := c.call(ctx, http.MethodGet, "/v1/list", time.Minute, &es)
	return es, err
}

// Flush asks the daemon to write the map of one session (id), up to date
// or not, or of every session with changes (all).
func (c *Client) Flush(ctx context.Context, id string, all bool) (FlushResult, error) {
	return c.flush(ctx, id, all, false)
}

// Rewrite writes every session's map again with the map options in
// effect, up to date or not: after a change of path mode, say. It may
// take minutes over a large history.
func (c *Client) Rewrite(ctx context.Context) (FlushResult, error) {
	return c.flush(ctx, "", true, true)
}

func (c *Client) flush(ctx context.Context, id string, all, rewrite bool) (FlushResult, error) {
	q := url.Values{}
	if all {
		q.Set("all", "1")
	} else {
		q.Set("id", id)
	}
	wait := flushWait + time.Minute
	if rewrite {
		q.Set("rewrite", "1")
		wait = flushWait + time.Hour
	}
	var res FlushResult
	err := c.call(ctx, http.MethodPost, "/v1/flush?"+q.Encode(), wait, &res)
	if err == nil && res.Error != "" {
		err = errors.New(res.Error)
	}
	return res, err
}

func (c *Client) call(parent context.Context, method, path string, timeout time.Duration, out any) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://agentmap"+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if closedWithoutAnswer(err) {
			return ErrRefused
		}
		if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
			// Our time ran out, not the caller's: the daemon took the
			// connection and said nothing (stopped with SIGSTOP, or hung).
			return fmt.Errorf("%w: no answer on its control socket within %v (is it stopped or hung?)", ErrNotAnswering, timeout)
		}
		return fmt.Errorf("control socket: %w", err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out); err != nil {
		return fmt.Errorf("control socket: undecodable answer (HTTP %d)", resp.StatusCode)
	}
	if resp.StatusCode >= 500 {
		return fmt.Errorf("control socket: HTTP %d", resp.StatusCode)
	}
	return nil
}

// closedWithoutAnswer reports whether a request failed because the daemon
// closed the connection before answering (it does so for another user).
// When the close is seen before the request is written, net/http reports
// it as "server closed idle connection", an error it does not export.
func closedWithoutAnswer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || strings.Contains(err.Error(), "server closed idle connection")
}
