package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// or beyond maxCount, after which only agentmap's maps remain.
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
	switch data, err := os.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
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
	limit := "older than 30d"
	if r.MaxAge != nil && *r.MaxAge != "" {
		limit = "older than " + *r.MaxAge
	}
	if r.MaxCount != nil {
		limit += fmt.Sprintf(" or beyond the newest %d", *r.MaxCount)
	}
	if r.Enabled == nil && r.MaxAge == nil && r.MaxCount == nil {
		src = "the default"
	}
	return check{levelWarn, topic, fmt.Sprintf(
		"Gemini CLI deletes chats %s (%s); agentmap's maps of them remain, but they cannot be rebuilt from the logs after that",
		limit, src)}
}
