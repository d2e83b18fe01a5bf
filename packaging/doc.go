// Package packaging installs agentmap as a per-user background service: a
// systemd --user unit on Linux, a launchd LaunchAgent on macOS.
//
// The service files come from our own templates (templates/, embedded),
// written in the template syntax of github.com/kardianos/service and handed
// to it in a service.Config (ServiceConfig), so that kardianos and this
// package render the same bytes (a test checks it). The installation itself
// is a Plan of steps (directories, files, commands) computed first and then
// applied, because agentmap needs what kardianos' Install does not give:
// a --dry-run that prints exactly what would be done, an install that can be
// repeated, launchd's bootstrap/bootout instead of the deprecated
// load/unload, and a clear explanation when a Linux user has no running
// systemd --user manager. kardianos answers the status queries.
package packaging
