package packaging

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Service names: the systemd unit is agentmap.service, the launchd job is
// labelled in reverse-DNS form after the project's home.
const (
	UnitName      = "agentmap"
	LaunchdLabel  = "com.github.agentmap.agentmap"
	description   = "agentmap: session maps of coding agents"
	reloadSignal  = "HUP"
	restartPolicy = "on-failure"
)

// Spec is everything a service definition depends on.
type Spec struct {
	GOOS string
	Home string
	UID  int
	// Binary is the absolute path of the agentmap executable to run.
	Binary string
	// ConfigFile is passed to `agentmap run --config`; "" lets the daemon
	// find its config the usual way.
	ConfigFile string
	// DataDir holds launchd's stdout and stderr files and is the working
	// directory of the service.
	DataDir string
	// RuntimeDir is $XDG_RUNTIME_DIR, where a running systemd --user keeps
	// its socket.
	RuntimeDir string
	// Env is the environment the service is given (Environment= lines,
	// launchd's EnvironmentVariables): the variables that move the agents'
	// roots or agentmap's directories, as set where install runs
	// (CarryEnv), since a service starts without that shell's environment.
	Env map[string]string
}

// CarryEnv gives the service the variables of names that getenv has set
// (config.ServiceEnv, os.Getenv). It returns those it cannot carry: a
// value a unit's Environment= line would change (white space, quotes, a
// backslash, % or $, which systemd reads as quoting or specifiers), or one
// with a control character or bytes that are not UTF-8; their directories are named in the config
// file instead (agents.*.roots, data_dir).
func (s *Spec) CarryEnv(names []string, getenv func(string) string) (left []string) {
	for _, name := range names {
		v := getenv(name)
		if v == "" {
			continue
		}
		if !s.canCarry(v) {
			left = append(left, name)
			continue
		}
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		s.Env[name] = v
	}
	return left
}

// canCarry reports whether the service file of the spec's OS holds v as
// it is: a LaunchAgent's XML any text but control characters; a unit's
// Environment= line no white space, quote, backslash, % or $ (kardianos's
// systemd backend writes the line unquoted, as the unit here does).
func (s Spec) canCarry(v string) bool {
	if !utf8.ValidString(v) {
		return false // systemd ignores the line, and it is no XML
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return false
		}
		if s.GOOS != "darwin" && (r == ' ' || strings.ContainsRune("\"'\\%$", r)) {
			return false
		}
	}
	return true
}

// Current returns the Spec of this machine and user for the running binary.
func Current(configFile, dataDir string) (Spec, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Spec{}, fmt.Errorf("no home directory: %w", err)
	}
	bin, err := os.Executable()
	if err != nil {
		return Spec{}, fmt.Errorf("locate the agentmap binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = stableBinary(resolved)
	}
	if configFile != "" {
		if configFile, err = filepath.Abs(configFile); err != nil {
			return Spec{}, err
		}
	}
	return Spec{
		GOOS: runtime.GOOS, Home: home, UID: os.Getuid(),
		Binary: bin, ConfigFile: configFile, DataDir: dataDir,
		RuntimeDir: os.Getenv("XDG_RUNTIME_DIR"),
	}, nil
}

// stableBinary is the path the service runs the binary at resolved by:
// resolved itself, except in Homebrew's Cellar. There it is
// <prefix>/Cellar/agentmap/<version>/bin/agentmap, which brew upgrade
// replaces and brew cleanup deletes, leaving the service pointing at
// nothing; Homebrew's own stable link, <prefix>/opt/agentmap/bin/agentmap,
// follows every upgrade.
func stableBinary(resolved string) string {
	bin := filepath.Dir(resolved)
	formula := filepath.Dir(filepath.Dir(bin))
	cellar := filepath.Dir(formula)
	if filepath.Base(bin) != "bin" || filepath.Base(formula) != UnitName || filepath.Base(cellar) != "Cellar" {
		return resolved
	}
	opt := filepath.Join(filepath.Dir(cellar), "opt", UnitName, "bin", filepath.Base(resolved))
	if fi, err := os.Stat(opt); err != nil || fi.IsDir() {
		return resolved
	}
	return opt
}

// ErrUnsupported is returned on systems without a per-user service manager
// agentmap knows.
var ErrUnsupported = errors.New("no per-user service manager agentmap can install into on this system")

// Name is the service's name for the OS's service manager.
func (s Spec) Name() string {
	if s.GOOS == "darwin" {
		return LaunchdLabel
	}
	return UnitName
}

// File is where the service definition lives.
func (s Spec) File() (string, error) {
	switch s.GOOS {
	case "linux":
		return filepath.Join(s.Home, ".config", "systemd", "user", UnitName+".service"), nil
	case "darwin":
		return filepath.Join(s.Home, "Library", "LaunchAgents", LaunchdLabel+".plist"), nil
	}
	return "", s.unsupported()
}

func (s Spec) unsupported() error {
	if s.GOOS == "windows" {
		return fmt.Errorf("%w: per-user services are not supported on Windows yet; "+
			"start `agentmap run` at logon instead, e.g. with: schtasks /Create /SC ONLOGON /TN agentmap /TR \"\\\"%s\\\" run\"",
			ErrUnsupported, s.Binary)
	}
	return fmt.Errorf("%w (%s); run `agentmap run` under the supervisor you use", ErrUnsupported, s.GOOS)
}

// Arguments are the arguments of the service's command line.
func (s Spec) Arguments() []string {
	args := []string{"run"}
	if s.ConfigFile != "" {
		args = append(args, "--config", s.ConfigFile)
	}
	if f := s.LogFile(); f != "" {
		args = append(args, "--log-file", f)
	}
	return args
}

// LogFile is where the service logs when the system keeps no log for it:
// on macOS a size-capped file in the data directory (logfile rotates it);
// on Linux "" (systemd sends the service's stderr to the journal).
func (s Spec) LogFile() string {
	if s.GOOS == "darwin" && s.DataDir != "" {
		return LogFile(s.DataDir)
	}
	return ""
}

// LogFile is the service's own log file under a data directory.
func LogFile(dataDir string) string { return filepath.Join(dataDir, "logs", "agentmap.log") }

// PackagedUnitPath is where the .deb puts the systemd user unit, for every
// user to turn on the distro way (systemctl --user enable --now agentmap).
// A unit of `agentmap install` in ~/.config/systemd/user takes precedence.
var PackagedUnitPath = "/usr/lib/systemd/user/" + UnitName + ".service"

// packaged reports whether the service is the package's unit: on Linux,
// no unit of install's in the user's directory and the package's there.
func (s Spec) packaged() bool {
	if s.GOOS != "linux" {
		return false
	}
	if path, err := s.File(); err == nil {
		if _, err := os.Stat(path); err == nil {
			return false
		}
	}
	_, err := os.Stat(PackagedUnitPath)
	return err == nil
}

// check rejects what a service file cannot carry safely: relative paths,
// and characters that systemd or launchd would interpret.
func (s Spec) check() error {
	if !filepath.IsAbs(s.Binary) {
		return fmt.Errorf("the agentmap binary path is not absolute")
	}
	for what, p := range map[string]string{"binary": s.Binary, "config file": s.ConfigFile, "data directory": s.DataDir} {
		if strings.ContainsAny(p, "%$\"\\\n\r\x00") {
			return fmt.Errorf("the %s path contains a character (%%, $, \", \\ or a control character) a service file cannot hold", what)
		}
	}
	if s.DataDir == "" || !filepath.IsAbs(s.DataDir) {
		return fmt.Errorf("the data directory is not an absolute path")
	}
	return nil
}

// ErrTemporaryBinary means the running binary would not outlive its build:
// a service pointed at it would fail to start once it is cleaned away.
var ErrTemporaryBinary = errors.New("the running agentmap is a temporary build")

// stays refuses a binary in the Go build cache (where go run keeps what it
// builds) or in a temporary directory, with the command to run instead.
func (s Spec) stays() error {
	where := ""
	switch {
	case under(s.Binary, goBuildCache()):
		where = "in the Go build cache (" + goBuildCache() + "), where go run builds it; go clean -cache removes it"
	case under(s.Binary, tempDirs()...) && goBuildDir(s.Binary):
		where = "in a temporary directory of the go command (go run, go test), which is cleaned away"
	case under(s.Binary, tempDirs()...):
		// Not a build of the go command (a downloaded release, say): a
		// copy in a directory that stays serves.
		home, _ := os.UserHomeDir()
		stay := filepath.Join(home, ".local", "bin", "agentmap")
		if under(stay, tempDirs()...) {
			// The home itself is temporary (a test account, a sandbox):
			// ~/.local/bin would be cleaned away as well, and the copy
			// would be refused in turn.
			return fmt.Errorf("%w: %s lives in a temporary directory, which is cleaned away, and so is the home directory %s: copy it to a directory outside them that stays (such as /usr/local/bin), then install the service from there",
				ErrTemporaryBinary, s.Binary, home)
		}
		return fmt.Errorf("%w: %s lives in a temporary directory, which is cleaned away. Copy it to a directory that stays, then install the service from there:\n"+
			"  mkdir -p %s && cp %s %s && %s install",
			ErrTemporaryBinary, s.Binary, shellJoin([]string{filepath.Dir(stay)}), shellJoin([]string{s.Binary}),
			shellJoin([]string{stay}), shellJoin([]string{stay}))
	default:
		return nil
	}
	if installed := filepath.Join(goBin(), "agentmap"); under(installed, tempDirs()...) {
		return fmt.Errorf("%w: %s lives %s, and go install would put it in %s, a temporary directory too: set GOBIN to a directory that stays (GOBIN=DIR go install ./cmd/agentmap), then install the service from the binary there",
			ErrTemporaryBinary, s.Binary, where, goBin())
	}
	return fmt.Errorf("%w: %s lives %s. Install it first, then install the service from the installed binary:\n"+
		"  go install ./cmd/agentmap && %s install",
		ErrTemporaryBinary, s.Binary, where, shellJoin([]string{filepath.Join(goBin(), "agentmap")}))
}

// goBuildDir reports whether path is inside a go-build* directory, where
// go run and go test put the binaries they build.
func goBuildDir(path string) bool {
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(path)), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	return false
}

// under reports whether path is inside one of dirs (compared after
// resolving symbolic links, as /tmp and /var are on macOS).
func under(path string, dirs ...string) bool {
	paths := []string{path}
	if r := resolved(path); r != path {
		paths = append(paths, r) // /var/folders/… is /private/var/folders/… on macOS
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		ds := []string{d}
		if r, err := filepath.EvalSymlinks(d); err == nil && r != d {
			ds = append(ds, r)
		}
		for _, p := range paths {
			for _, d := range ds {
				rel, err := filepath.Rel(d, p)
				if err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
					return true
				}
			}
		}
	}
	return false
}

// resolved is path with the symbolic links of its nearest existing
// ancestor resolved (the rest of it need not exist yet: ~/.local/bin).
func resolved(path string) string {
	rest := ""
	for dir := filepath.Clean(path); ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(dir) == dir {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

func tempDirs() []string {
	dirs := []string{os.TempDir()}
	if runtime.GOOS != "windows" {
		dirs = append(dirs, "/tmp", "/var/tmp")
	}
	return dirs
}

// goBuildCache is $GOCACHE, else go-build in the user cache directory (the
// go command's default); "off" has no cache.
func goBuildCache() string {
	if c := os.Getenv("GOCACHE"); c != "" && c != "off" {
		return c
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "go-build")
	}
	return ""
}

// goBin is where go install puts binaries: $GOBIN, else the first
// directory of $GOPATH, else ~/go, with bin.
func goBin() string {
	if b := os.Getenv("GOBIN"); b != "" {
		return b
	}
	if p := filepath.SplitList(os.Getenv("GOPATH")); len(p) > 0 && p[0] != "" {
		return filepath.Join(p[0], "bin")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go", "bin")
}
