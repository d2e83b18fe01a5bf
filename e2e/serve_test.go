package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// serve starts h on a loopback port and returns its base URL. With
// AGENTMAP_E2E_TRACE=DIR every request body is saved there, which is how
// a new client version's requests are studied.
func serve(t *testing.T, name string, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("AGENTMAP_E2E_TRACE"); dir != "" {
		h = trace(filepath.Join(dir, name), h)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func trace(dir string, h http.Handler) http.Handler {
	var n atomic.Int64
	os.MkdirAll(dir, 0o700)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		i := n.Add(1)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d.json", i)),
			append([]byte(r.Method+" "+r.URL.String()+"\n"), body...), 0o600)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}
