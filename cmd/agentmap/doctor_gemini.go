package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmap/agentmap/internal/regular"
)

// geminiSettings is Gemini CLI's user settings file: $GEMINI_CLI_HOME (its
// home override) or the home directory, then .gemini/settings.json.
func geminiSettings(home, env string) string {
	if env != "" {
		home = env
	}
	return filepath.Join(home, ".gemini", "settings.json")
}

// geminiCleanupCheck reads general.sessionRetention: unless the user turns
// it off, Gemini CLI deletes chats older than maxAge (30 days by default)
// or beyond maxCount, after which only agentmap's maps remain. It is rated
// like Claude Code's cleanupPeriodDays: a retention under two weeks warns
// (a fortnight without agentmap running loses chats for good); the default
// month, or a count limit, is worth knowing (info); a year or more is ok.
// Without Gemini CLI on the machine there is nothing to rate.
func geminiCleanupCheck(path string, enabled bool) check {
	const topic = "cleanup"
	if !enabled {
		return check{levelInfo, topic, "Gemini CLI is disabled in the config"}
	}
	var s struct {
		General struct {
			SessionRetention struct {
				Enabled  *bool   `json:"enabled"`
				MaxAge   *string `json:"maxAge"`
				MaxCount *int    `json:"maxCount"`
			} `json:"sessionRetention"`
		} `json:"general"`
	}
	src := "the default"
	switch data, err := regular.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
			return check{levelInfo, topic, "Gemini CLI is not set up here (no " + filepath.Dir(path) + "); its chat cleanup is checked once it is"}
		}
	case err != nil:
		return check{levelWarn, topic, path + ": " + err.Error()}
	default:
		if err := json.Unmarshal(data, &s); err != nil {
			return check{levelWarn, topic, path + ": not valid JSON"}
		}
		src = "general.sessionRetention in " + path
	}
	r := s.General.SessionRetention
	if r.Enabled != nil && !*r.Enabled {
		return check{levelOK, topic, "Gemini CLI keeps its chats (session cleanup is off in " + path + ")"}
	}
	if r.Enabled == nil && r.MaxAge == nil && r.MaxCount == nil {
		src = "the default"
	}
	days, age := float64(defaultCleanupDays), "30d"
	if r.MaxAge != nil && *r.MaxAge != "" {
		age = *r.MaxAge
		now := time.Now()
		t, err := parseWindow(age, now)
		if err != nil {
			return check{levelWarn, topic, fmt.Sprintf("Gemini CLI's general.sessionRetention.maxAge %q in %s is not a duration agentmap can read (such as 30d)", age, path)}
		}
		days = now.Sub(t).Hours() / 24
	}
	limit := "older than " + age
	if r.MaxCount != nil {
		limit += fmt.Sprintf(" or beyond the newest %d", *r.MaxCount)
	}
	switch {
	case days < shortCleanupDays:
		return check{levelWarn, topic, fmt.Sprintf(
			"Gemini CLI deletes chats %s (%s): chats from a time agentmap was not running are lost; set general.sessionRetention.maxAge to \"%dd\" or more in %s",
			limit, src, defaultCleanupDays, path)}
	case days < longCleanupDays || r.MaxCount != nil:
		return check{levelInfo, topic, fmt.Sprintf(
			"Gemini CLI deletes chats %s (%s); agentmap's maps of them remain, but they cannot be rebuilt from the logs after that",
			limit, src)}
	}
	return check{levelOK, topic, fmt.Sprintf("Gemini CLI keeps chats for %s (%s)", age, src)}
}
