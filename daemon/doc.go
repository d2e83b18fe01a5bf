/*
Package daemon is the follower behind `agentmap run` and `agentmap scan`.

One goroutine (Run) owns every record; the watcher (package watchers)
reports file changes to it over a channel. For each change the daemon reads
the complete lines a log gained, parses them with the agent's parser and
commits, in one bbolt transaction per batch, the events, the parser's
carry-state and the new cursor (batches of many sources share a
transaction during a catch-up). A session's map is built from its stored
events only, so it is a pure function of the log lines: the map the daemon
writes equals `agentmap build` over the same complete files, whatever
chunking, restarts and crashes happened on the way.

Decisions, kept stable:

  - When a map is written. A session is flushed when it has been quiet
    (no file of it changed; file mtimes are the activity clock, so a
    history found at first start is written at once) for Idle (15m), or
    for TurnEndQuiet (Idle/3) when its last main-lane record is a turn end
    (Claude turn_duration, Codex task_complete, Cursor turn_ended: the agent
    waits for its user), or at once after an explicit end: its file was
    deleted, or moved into Codex's archived_sessions/. A session that grows
    again is re-flushed and its map replaced at the same path (a new path
    if its start month changed; the old file is removed).
  - Stopping (SIGINT, SIGTERM) ends the current batch and commits what
    was read; maps not yet due are written by the next run, when they are.
  - `run --once` (`agentmap scan`) reads everything present and then
    flushes every session that changed, quiet or not: nothing more will be
    read, and a later run re-flushes a session that grows.
  - A last line without newline is never consumed; at flush time it is
    parsed by a parser restored from the committed carry-state, and its
    events are used if it parses (as `agentmap build` does with a final
    line).
  - Order of a session's sources: by lane, then file name. The builder is
    independent of how lanes interleave; each lane keeps its file's order.
  - A Codex child rollout is mapped on its own and, relabelled with
    builder.AsLane, as a lane of its parent's map; a child's growth
    re-flushes its parent. A session known only as a parent (its own log
    absent) has no map.
  - A session the builder refuses (a lane whose parent log is absent) is
    logged and left until its events change, not retried.
  - Truncation, replacement (new inode or new head) and rewrite (the hash
    of the 256 bytes before the cursor changed) rebuild that file from
    zero: its events are dropped and its routing read again. A rename
    follows the file (same identity and head): nothing is read again.
  - A Claude subagent log read before its meta.json existed is read again
    from the start when the sidecar appears (at its next change), so its
    lane's type and launching call match a later `agentmap build`.
  - Codex rollouts compressed in place: a .zst beside its plain file is
    ignored; when the plain file goes, the .zst takes its place and is read
    whole. Single-document JSON rollouts are read whole too.
  - Cursor databases (state.vscdb, store.db) are polled when the file or
    its -wal changes; each conversation is a source "<db>#<id>" whose
    events are replaced when they differ. A busy database is retried after
    5 s.
  - Lines over MaxLine (64 MiB) are skipped and counted; memory stays
    bounded by the cap (the line is held until it exceeds it).
  - A failed map write is retried with exponential back-off from 1 s to
    5 min; events and cursors are already committed, so nothing is lost.
  - Parsers that take their file's path and times (Cursor transcripts,
    whose lines carry no times) get them through agents.AttachFile before
    every batch, read after the file's size; `agentmap build` does the
    same once, so the session bounds agree. A file touched later without a
    new complete line keeps the bounds of its last batch (unless its
    partial last line parses at flush time). A last line without a
    newline that grows is committed as a batch without events (its size
    recorded), so that the session changes and its map is written again
    with that line once it parses.
  - privacy.exclude is checked before a new log is routed, from the cwd
    of its first records (exclude.go): an excluded log leaves nothing in
    the state, only an in-memory note to skip it.
  - Reconfigure (a reloaded config file) swaps the idle times, the roots
    (the watcher is started again), the exclusions and the mapper (path
    mode, hash key, event cap, prices) in the loop: the next map written
    uses them, and a change of the maps' options has every map written
    again (identity.go).
  - The control API (control.go) is HTTP/JSON on <data dir>/agentmap.sock
    (a short path in /tmp when that one is too long: ControlPath),
    0600, serving the daemon's own uid only (SO_PEERCRED, LOCAL_PEERCRED);
    status answers from a snapshot the loop publishes, list reads the
    state in its own read transaction, flush is run by the loop. Windows
    has no socket.
*/
package daemon
