// Package config is agentmap's configuration: every setting has a default
// (Default), a TOML file may override any of them (Load), and Validate
// reports every problem at once, each naming its key and, when it came from a
// file, its line.
//
// The file is found by Path: the --config flag, else $AGENTMAP_CONFIG, else
// os.UserConfigDir()/agentmap/config.toml. No file is needed; a missing file
// means the defaults.
//
// Reloading: the daemon re-runs Load on SIGHUP and when the file changes. A
// new file that fails to load or validate is reported and the config already
// in use is kept, so a typo never stops a running daemon.
//
// Durations are strings ("15m", "24h", "7d"); sizes are strings too
// ("64MiB"). Paths may start with "~/", which is the user's home directory.
package config
