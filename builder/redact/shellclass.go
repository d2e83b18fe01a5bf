package redact

import (
	"strings"

	"github.com/agentmap/agentmap/builder/event"
)

// positionals returns up to n literal operands of a command, skipping
// options (those in arg take the next word as their value). It stops at
// the first word that is not literal.
func positionals(rest []word, arg map[string]bool, n int, plusFlags bool) []string {
	var out []string
	opts := true
	for k := 0; k < len(rest) && len(out) < n; k++ {
		a := rest[k]
		if !a.lit {
			break
		}
		s := a.s
		if opts {
			if s == "--" {
				opts = false
				continue
			}
			if len(s) > 1 && s[0] == '-' {
				if arg[s] && !strings.Contains(s, "=") {
					k++
				}
				continue
			}
			if plusFlags && len(s) > 1 && s[0] == '+' {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

func hasFlag(rest []word, flags ...string) bool {
	for _, a := range rest {
		if !a.lit {
			continue
		}
		for _, f := range flags {
			if a.s == f || strings.HasPrefix(a.s, f+"=") {
				return true
			}
		}
	}
	return false
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// showsHead reports whether a git log, show or rev-parse prints HEAD's sha
// first: no revision but HEAD, no "--" or paths, only flags (and counts,
// as in -n 1). "git log -- file" or "git show v1.2" name other commits.
func showsHead(sub string, rest []word) bool {
	switch sub {
	case "log", "show", "rev-parse":
	default:
		return false
	}
	seen := false
	heads := 0
	for _, w := range rest {
		if !w.lit {
			return false
		}
		switch s := w.s; {
		case !seen:
			seen = s == sub // the words up to the subcommand are git's own options
		case s == "--":
			return false
		case s == "HEAD" || s == "@":
			heads++
		case strings.HasPrefix(s, "-"), isDigits(s):
		default:
			return false
		}
	}
	return seen && (sub != "rev-parse" || heads == 1)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// gitWrites are git subcommands that change history or the remote; a list
// with several git commands reports the first of these as its VCS facet.
var gitWrites = set(`commit push merge rebase cherry-pick revert tag reset checkout switch branch am
	apply stash pull worktree restore`)

// classify turns a program (after wrappers) and its arguments into a
// command result. Words after the program reach the verb only through the
// vocabulary tables.
func classify(prog string, rest []word) cmdRes {
	name := verbName(prog)
	fam := family(prog)
	res := cmdRes{verb: name, cat: "shell"}
	if trivialPrograms[fam] {
		res.trivial = true
		return res
	}
	switch fam {
	case "git", "hub":
		res.cat = "vcs"
		pos := positionals(rest, argFlags["git"], 1, false)
		if sub := at(pos, 0); subcommands["git"][sub] {
			res.verb = name + " " + sub
			res.vcs = &event.VCS{Provider: "git", Action: sub}
			res.vcsRank = 1
			if gitWrites[sub] {
				res.vcsRank = 2
			}
			res.showsHead = showsHead(sub, rest)
		}
		return res
	case "gh", "glab":
		return forge(name, fam, rest)
	case "make":
		return makeCommand(name, rest)
	case "mvn", "gradle", "sbt":
		return taskRunner(name, fam, rest)
	case "turbo", "nx":
		res = taskRunner(name, fam, rest)
		if sub := at(positionals(rest, nil, 1, false), 0); subcommands[fam][sub] {
			res.verb = name + " " + sub
		}
		return res
	case "python":
		pos := positionals(rest, argFlags["python"], 2, false)
		if strings.HasSuffix(at(pos, 0), "manage.py") && at(pos, 1) == "test" {
			return cmdRes{verb: name, cat: vTest, verify: true} // Django's test runner
		}
		return res
	case "node":
		if hasFlag(rest, "--test") {
			return cmdRes{verb: name, cat: vTest, verify: true}
		}
		return res
	case "prettier":
		if hasFlag(rest, "--check", "-c", "--list-different", "-l") {
			return cmdRes{verb: name, cat: vTest, verify: true}
		}
		return res
	case "black", "isort", "gofmt", "autopep8", "rustfmt", "clang-format":
		if hasFlag(rest, "--check", "--check-only", "-c", "-l", "--diff", "--dry-run") {
			return cmdRes{verb: name, cat: vTest, verify: true}
		}
		return res
	case "xcodebuild":
		if hasWord(rest, "test") {
			return cmdRes{verb: name, cat: vTest, verify: true}
		}
		return cmdRes{verb: name, cat: vBuild, verify: true}
	case "webpack":
		if hasWord(rest, "serve") || hasFlag(rest, "--watch", "-w") {
			return cmdRes{verb: name, cat: vBuild}
		}
	}
	if subs, ok := subcommands[fam]; ok {
		return multiVerb(name, fam, subs, rest)
	}
	if k := verifyPrograms[fam]; k != "" {
		return cmdRes{verb: name, cat: k, verify: true}
	}
	switch {
	case httpPrograms[fam]:
		res.cat = "http"
	case cloudPrograms[fam]:
		res.cat = "cloud"
	case fsPrograms[fam] || fsPrograms[prog]:
		res.cat = "fs"
	}
	return res
}

func hasWord(rest []word, w string) bool {
	for _, a := range rest {
		if a.lit && a.s == w {
			return true
		}
	}
	return false
}

// multiVerb handles the tools whose first operand is a subcommand.
func multiVerb(name, fam string, subs map[string]bool, rest []word) cmdRes {
	res := cmdRes{verb: name, cat: "shell"}
	if cloudPrograms[fam] {
		res.cat = "cloud"
	}
	pos := positionals(rest, argFlags[fam], 3, fam == "cargo" || fam == "rustup")
	sub := at(pos, 0)
	known := subs[sub]
	script := ""
	switch fam {
	case "npm":
		switch sub {
		case "run", "run-script":
			script = at(pos, 1)
		case "test", "t", "tst":
			script = "test"
		}
	case "mise":
		// A task run by name: like a package script, the name is the
		// project's own and only classifies the command.
		if sub == "run" || sub == "r" {
			script, sub = at(pos, 1), "run"
		}
	case "pnpm", "yarn", "bun":
		switch {
		case sub == "run":
			script = at(pos, 1)
		case sub == "test" || sub == "t":
			script = "test"
		case sub == "workspace" && fam == "yarn":
			script = at(pos, 2) // yarn workspace <name> <script>
		case sub == "" && fam == "yarn":
			return cmdRes{verb: name, cat: "package"} // bare yarn installs
		case !known && isScriptName(sub):
			// A script run by name: recorded as "<pm> run", the name
			// being the project's own (like a make target).
			script, sub, known = sub, "run", true
		}
	}
	if !known {
		return res
	}
	res.verb = name + " " + sub
	if three := threeWords[fam]; three[sub] && thirdWords[at(pos, 1)] {
		res.verb += " " + at(pos, 1)
	}
	if script != "" {
		if k := scriptKind(script); k != "" {
			res.cat, res.verify = k, true
			return res
		}
	}
	if k := subVerify(fam, sub, at(pos, 1), rest); k != "" {
		res.cat, res.verify = k, true
		return res
	}
	if isInstall(fam, sub, at(pos, 1)) {
		res.cat = "package"
	}
	return res
}

// subVerify says whether a tool's subcommand is a test, lint, build or
// type check.
func subVerify(fam, sub, sub2 string, rest []word) string {
	switch fam + " " + sub {
	case "cargo test", "cargo t", "cargo nextest", "cargo llvm-cov", "cargo tarpaulin", "cargo clippy",
		"cargo miri", "go test", "go vet", "bun test", "deno test", "deno lint", "dotnet test",
		"swift test", "flutter test", "flutter analyze", "dart test", "dart analyze", "mix test",
		"mix credo", "playwright test", "cypress run", "golangci-lint run", "ruff check", "biome check",
		"biome lint", "biome ci", "bazel test", "bazel coverage", "zig test", "sbt test", "stack test",
		"cabal test", "ng test", "ng lint", "ng e2e", "next lint", "coverage run", "helm lint",
		"terraform validate", "tofu validate", "npm install-test", "npm it", "npm install-ci-test",
		"npm cit", "pnpm install-test", "pnpm it":
		return vTest
	case "cargo build", "cargo b", "cargo check", "cargo c", "go build", "deno check", "deno compile",
		"dotnet build", "swift build", "flutter build", "dart compile", "mix compile", "mix dialyzer",
		"bazel build", "sbt compile", "stack build", "cabal build", "ng build", "vite build",
		"next build", "nuxt build", "nuxt generate", "uv build", "poetry build", "bun build":
		return vBuild
	case "zig build":
		if sub2 == "test" {
			return vTest
		}
		return vBuild
	case "cargo fmt", "ruff format", "biome format", "dotnet format", "deno fmt":
		if hasFlag(rest, "--check", "--verify-no-changes") {
			return vTest
		}
	}
	if fam == "golangci-lint" && sub == "" {
		return vTest
	}
	return ""
}

// isInstall reports whether a package manager's subcommand installs.
func isInstall(fam, sub, sub2 string) bool {
	switch fam {
	case "npm", "pnpm", "yarn", "bun", "pip", "poetry", "cargo", "brew", "apt", "apt-get", "gem",
		"bundle", "composer", "conda", "deno", "dotnet":
		return installSubs[sub] || sub == "upgrade" && (fam == "brew" || fam == "apt" || fam == "apt-get") ||
			fam == "dotnet" && sub == "restore"
	case "go":
		return sub == "get" || sub == "install" || sub == "mod"
	case "uv":
		return sub == "add" || sub == "sync" || (sub == "pip" || sub == "tool") && sub2 == "install"
	case "flutter", "dart":
		return sub == "pub" && sub2 == "get"
	case "mix":
		return sub == "deps.get"
	}
	return false
}

// isScriptName accepts names a package.json script could have, and no
// file names or paths.
func isScriptName(s string) bool {
	if s == "" || len(s) > 40 || !isASCIILetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || isDigit(c) || c == ':' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// scriptKind classifies a script or task name (package.json scripts, make
// targets, turbo/nx/gradle tasks): test, build, or "" for neither.
func scriptKind(name string) string {
	n := strings.ToLower(name)
	if i := strings.LastIndexByte(n, ':'); i >= 0 && strings.Count(n, ":") == 1 && !scriptWordKnown(n[:i]) {
		n = n[i+1:] // nx "app:test"
	}
	if k := verifyPrograms[n]; k != "" {
		return k
	}
	switch n {
	case "type-check", "check-types", "type:check", "check:types", "typecheck", "types", "tsc":
		return vBuild
	}
	first := n
	if i := strings.IndexAny(n, ":-_."); i >= 0 {
		first = n[:i]
	}
	switch first {
	case "test", "tests", "e2e", "spec", "specs", "unit", "integration", "jest", "vitest", "mocha",
		"cypress", "playwright", "lint", "eslint", "stylelint", "check", "verify", "ci":
		return vTest
	case "build", "compile", "typecheck", "tsc", "dist":
		return vBuild
	case "format", "fmt", "prettier":
		if strings.Contains(n, "check") {
			return vTest
		}
	}
	switch {
	case strings.HasSuffix(n, "test") || strings.HasSuffix(n, "tests") || strings.HasSuffix(n, "check"):
		return vTest
	case strings.HasSuffix(n, "lint"):
		return vTest
	}
	return ""
}

func scriptWordKnown(s string) bool {
	switch strings.SplitN(s, "-", 2)[0] {
	case "test", "lint", "build", "format", "fmt", "type", "check", "prettier", "e2e":
		return true
	}
	return false
}

// nonBuildTargets are make targets that do not build or check anything.
var nonBuildTargets = set(`clean distclean install uninstall deploy run serve dev start up down push
	release publish fmt format help docs doc setup bootstrap deps init migrate seed watch stop logs
	shell tidy generate gen proto docker image images run-dev env venv reset restart`)

// makeCommand: targets are the project's own names and never reach the
// verb; they only decide whether the run is a verify and which kind.
func makeCommand(name string, rest []word) cmdRes {
	var targets []string
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if !a.lit {
			continue
		}
		s := a.s
		switch {
		case s == "-j" || s == "--jobs" || s == "-l":
			if k+1 < len(rest) && rest[k+1].lit && isDuration(rest[k+1].s) {
				k++
			}
		case strings.HasPrefix(s, "-"):
			if argFlags["make"][s] {
				k++
			}
		case isAssignment(s):
		default:
			targets = append(targets, s)
		}
	}
	res := cmdRes{verb: name, cat: vBuild}
	if len(targets) == 0 {
		res.verify = true
		return res
	}
	kind, other := "", false
	for _, t := range targets {
		switch k := scriptKind(t); {
		case k == vTest:
			kind = vTest
		case k == vBuild || t == "all":
			if kind == "" {
				kind = vBuild
			}
		default:
			first := strings.ToLower(t)
			if i := strings.IndexAny(first, "-_:."); i >= 0 {
				first = first[:i]
			}
			if !nonBuildTargets[first] {
				other = true
			}
		}
	}
	switch {
	case kind != "":
		res.cat, res.verify = kind, true
	case other:
		res.verify = true // an unknown target: make builds things
	}
	return res
}

// taskRunner handles mvn, gradle, sbt, turbo and nx: tasks and phases are
// read, never kept.
func taskRunner(name, fam string, rest []word) cmdRes {
	cat := vBuild
	if fam == "turbo" || fam == "nx" {
		cat = "shell"
	}
	res := cmdRes{verb: name, cat: cat}
	kind := ""
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if !a.lit {
			continue
		}
		s := a.s
		if strings.HasPrefix(s, "-") {
			if (fam == "nx" || fam == "turbo") && (s == "-t" || s == "--target" || s == "--targets") && k+1 < len(rest) {
				s = rest[k+1].s
				k++
			} else if v, ok := strings.CutPrefix(s, "--target="); ok {
				s = v
			} else if v, ok := strings.CutPrefix(s, "--targets="); ok {
				s = v
			} else {
				if argFlags[fam][s] {
					k++
				}
				continue
			}
		}
		for _, t := range strings.Split(s, ",") {
			if fam == "mvn" && strings.Contains(t, ":") {
				continue // plugin goals
			}
			switch scriptKind(t) {
			case vTest:
				kind = vTest
			case vBuild:
				if kind == "" {
					kind = vBuild
				}
			default:
				lt := strings.ToLower(t)
				if i := strings.LastIndexByte(lt, ':'); i >= 0 {
					lt = lt[i+1:] // gradle ":app:assembleDebug"
				}
				switch {
				case fam == "turbo" || fam == "nx" || kind != "":
				case lt == "package" || lt == "install" || lt == "jar" || lt == "bootjar" || lt == "war" ||
					lt == "shadowjar" || lt == "test-compile" || strings.HasPrefix(lt, "assemble") ||
					strings.HasPrefix(lt, "compile") || strings.HasPrefix(lt, "bundle"):
					kind = vBuild
				}
			}
		}
	}
	if kind != "" {
		res.cat, res.verify = kind, true
	}
	return res
}

// forge handles gh and glab: the verb is "<program> <noun> <verb>"; the VCS
// action is "<noun>_<verb>". A PR/issue number and a -R owner/name are
// identifiers and are kept on the facet.
func forge(name, fam string, rest []word) cmdRes {
	provider := "github"
	if fam == "glab" {
		provider = "gitlab"
	}
	res := cmdRes{verb: name, cat: "vcs", vcsRank: 3}
	pos := positionals(rest, argFlags[fam], 3, false)
	noun := at(pos, 0)
	if !subcommands[fam][noun] {
		return res
	}
	vcs := &event.VCS{Provider: provider, Action: noun}
	res.verb = name + " " + noun
	next := 1
	if threeWords[fam][noun] && thirdWords[at(pos, 1)] {
		res.verb += " " + at(pos, 1)
		vcs.Action = noun + "_" + at(pos, 1)
		next = 2
	}
	if id := at(pos, next); id != "" && (noun == "pr" || noun == "issue" || noun == "mr" || noun == "run") {
		id = strings.TrimLeft(id, "#!")
		if n := leadingNumber(id); n > 0 && len(id) <= 9 && strings.Trim(id, "0123456789") == "" {
			vcs.Number = n
		} else if pr := prFromURL(at(pos, next)); pr != nil {
			vcs.Number, vcs.Repo = pr.Number, pr.Repo
		}
	}
	if r := repoFlag(rest); r != "" {
		vcs.Repo = r
	}
	res.vcs = vcs
	return res
}

// repoFlag returns the owner/name given with -R/--repo, if it has that
// shape.
func repoFlag(rest []word) string {
	for k, a := range rest {
		if !a.lit {
			continue
		}
		v := ""
		switch {
		case (a.s == "-R" || a.s == "--repo") && k+1 < len(rest) && rest[k+1].lit:
			v = rest[k+1].s
		case strings.HasPrefix(a.s, "--repo="):
			v = a.s[len("--repo="):]
		default:
			continue
		}
		if o, n, ok := strings.Cut(v, "/"); ok && isPlainName(o) && isPlainName(n) {
			return v
		}
		return ""
	}
	return ""
}
