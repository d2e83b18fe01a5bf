module github.com/agentmap/agentmap

go 1.26.8

// No browser-automation library: the report's Chromium tests speak the DevTools protocol
// through report/internal/cdp (a websocket client and a dozen commands on the standard
// library), where chromedp would bring the generated bindings of the whole protocol.
require (
	github.com/BurntSushi/toml v1.6.0 // the config file; decoding metadata lets unknown keys be rejected
	github.com/fsnotify/fsnotify v1.10.1 // change hints on directories; the periodic rescan stays the truth
	github.com/jackc/pgx/v5 v5.13.0 // the team sink: PostgreSQL wire protocol, pipelined batches, COPY, pooled connections, pure Go
	github.com/kardianos/service v1.3.0 // per-user systemd/launchd service status, with our own templates
	github.com/klauspost/compress v1.20.4 // zstd for compressed Codex rollouts (.jsonl.zst), flate for the maps' gzip, s2 for the state's event batches
	github.com/mattn/go-isatty v0.0.24 // progress bar only on a terminal
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // JSON Schema 2020-12 and draft-07 validation of maps and exports
	github.com/spf13/cobra v1.10.2 // the command tree, help CMD, bash/zsh/fish completion and man pages (cobra/doc) from one definition; the CLI library of kubectl, gh and hugo, maintained; commands keep their own flag.FlagSet
	go.etcd.io/bbolt v1.5.0 // the state database: one file, transactions, an exclusive lock with timeout
	golang.org/x/sys v0.49.0 // peer credentials on the control socket, file birth times
	modernc.org/sqlite v1.62.0 // read-only access to Cursor's SQLite stores without cgo
	mvdan.cc/sh/v3 v3.14.1 // a real shell parser for shell verbs, so no argument slips through
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.6 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)
