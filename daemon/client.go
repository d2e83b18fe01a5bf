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
	"strconv"
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

// List asks the daemon for the sessions in the store. The answer is read
// an entry at a time and has no size limit: a store of 100,000 sessions
// answers with some 50 MB of JSON, and twice that must still list.
func (c *Client) List(ctx context.Context) ([]Entry, error) {
	l, err := watched[entryList](ctx, c, http.MethodGet, "/v1/list", time.Minute)
	return l, err
}

// Named asks the daemon for the sessions n may name (EntriesNamed): what
// show and flush look for, without the whole listing. A daemon of an
// earlier version answers with every session; the caller picks among
// them as it would among the whole listing.
func (c *Client) Named(ctx context.Context, n Named) ([]Entry, error) {
	q := url.Values{"id": {n.ID}, "key": {n.Key}}
	return watched[entryList](ctx, c, http.MethodGet, "/v1/list?"+q.Encode(), time.Minute)
}

// entryList decodes a JSON array of entries one element at a time, so
// that the decoder never holds the whole answer (json.Decoder.Decode
// buffers a value whole before decoding it).
type entryList []Entry

func (l *entryList) decodeFrom(r io.Reader) error {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err == nil && tok == nil {
		return nil // an earlier version's daemon answers an empty store with null
	}
	if err != nil || tok != json.Delim('[') {
		return errors.New("not a list")
	}
	for dec.More() {
		var e Entry
		if err := dec.Decode(&e); err != nil {
			return err
		}
		*l = append(*l, e)
	}
	_, err = dec.Token()
	return err
}

// Recent asks the daemon for the n newest sessions of its flush records
// whose id starts with prefix, of agent when given (Recent). It waits
// for no catch-up: completion asks it while the user waits at the prompt.
// A daemon of an earlier version answers with every session, which
// Newest narrows.
func (c *Client) Recent(ctx context.Context, agent, prefix string, n int) ([]Entry, error) {
	q := url.Values{"newest": {strconv.Itoa(n)}, "agent": {agent}, "prefix": {prefix}}
	var es []Entry
	if err := c.call(ctx, http.MethodGet, "/v1/list?"+q.Encode(), probeWait, &es); err != nil {
		return nil, err
	}
	return Newest(es, agent, prefix, n), nil
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
	res, err := watched[FlushResult](ctx, c, http.MethodPost, "/v1/flush?"+q.Encode(), wait)
	if err == nil && res.Error != "" {
		err = errors.New(res.Error)
	}
	return res, err
}

// scanProbe is how often a call that may take long (watched) asks the
// daemon for its status meanwhile, and probeWait how long it waits for
// the answer. The status is served apart from the loop, so a daemon busy
// with the call answers at once; one stopped (SIGSTOP) or hung answers
// nothing.
var scanProbe, probeWait = 15 * time.Second, 10 * time.Second

// watched makes a call of c whose answer may take long (a catch-up, a flush or
// a rewrite of many maps, the list of a large store): up to wait, as long
// as the daemon is alive. It asks for the status first, which a daemon that
// is stopped or hung does not answer within probeWait, and every scanProbe
// while it waits; one unanswered probe before the call, or two in a row
// during it (a read of the state can wait briefly while the file grows),
// end it with ErrNotAnswering, as status says of such a daemon, instead of
// waiting out minutes.
//
// The answer is decoded into a value of the call's own, handed over only
// when it is complete: a call given up on may still be decoding.
func watched[T any](ctx context.Context, c *Client, method, path string, wait time.Duration) (T, error) {
	var zero T
	var st Status
	if err := c.call(ctx, http.MethodGet, "/v1/status", probeWait, &st); err != nil {
		return zero, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		a.err = c.call(ctx, method, path, wait, &a.v)
		done <- a
	}()
	probe := time.NewTicker(scanProbe)
	defer probe.Stop()
	missed := 0
	for {
		select {
		case a := <-done:
			return a.v, a.err
		case <-probe.C:
			err := c.call(ctx, http.MethodGet, "/v1/status", probeWait, &st)
			if err == nil || ctx.Err() != nil {
				missed = 0
				continue
			}
			select {
			case a := <-done: // it answered meanwhile
				return a.v, a.err
			default:
			}
			if missed++; missed == 2 {
				return zero, err
			}
		}
	}
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
	if l, ok := out.(*entryList); ok && resp.StatusCode == http.StatusOK {
		err = l.decodeFrom(resp.Body)
	} else {
		err = json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out)
	}
	if err != nil {
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
