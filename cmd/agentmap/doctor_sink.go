package main

import (
	"os"

	"github.com/agentmap/agentmap/config"
)

// sinkChecks are doctor's lines on the team database's settings: a
// password_env not set here, or one a service would not have; a url_file
// that cannot be read, or that its group or others can read (it holds the
// password, where they can read it). The file is named, never what it
// holds.
func sinkChecks(c *config.Config) []check {
	s := c.Sink.Postgres
	if !s.Enabled() {
		return nil
	}
	if s.URLFile != "" {
		if _, err := os.Stat(s.URLFile); err != nil {
			return []check{{levelWarn, "sink", "sink.postgres.url_file: " + err.Error() + ": the daemon cannot send to the team database"}}
		}
	}
	if _, err := s.SinkURL(); err != nil {
		return []check{{levelWarn, "sink", err.Error() + ": a daemon started here sends nothing to the team database"}}
	}
	if w := s.PasswordEnvWarning(); w != "" {
		return []check{{levelWarn, "sink", w}}
	}
	if s.URLFile == "" {
		return nil
	}
	if w := s.URLFileWarning(); w != "" {
		return []check{{levelWarn, "sink", w}}
	}
	return []check{{levelOK, "sink", "sink.postgres.url_file " + s.URLFile + " is not readable by its group or others"}}
}
