package redact

import (
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/internal/cite"
)

func TestParseShell(t *testing.T) {
	tests := []struct {
		cmd    string
		verb   string
		cat    string
		verify bool
	}{
		// plain programs and subcommands
		{"git status", "git status", "vcs", false},
		{"git -C /srv/app log --oneline -5", "git log", "vcs", false},
		{"git -c user.email=a@b.c commit -m 'wip'", "git commit", "vcs", false},
		{"/usr/bin/git diff HEAD~1", "git diff", "vcs", false},
		{"git --no-pager show abc123", "git show", "vcs", false},
		{"git", "git", "vcs", false},
		{"git frobnicate-secret-thing", "git", "vcs", false},
		{"ls -la", "ls", "fs", false},
		{"cat README.md", "cat", "fs", false},
		{"rm -rf build/", "rm", "fs", false},
		{"mkdir -p a/b/c", "mkdir", "fs", false},
		{"find . -name '*.go' -newer x", "find", "fs", false},
		{"curl -sSL -H 'Authorization: Bearer x' https://api.example.com/v1", "curl", "http", false},
		{"wget -q https://example.com/file.tgz", "wget", "http", false},
		{"echo hello > out.txt", "echo", "shell", false},
		{"jq '.items[]' data.json", "jq", "shell", false},
		{"./scripts/deploy.sh --prod", "deploy.sh", "shell", false},
		{`C:\tools\bin\rg.exe foo`, "rg", "fs", false},
		// package managers
		{"npm install", "npm install", "package", false},
		{"npm i -D typescript", "npm i", "package", false},
		{"npm ci", "npm ci", "package", false},
		{"npm run build", "npm run", "build", true},
		{"npm run test:unit -- --watch=false", "npm run", "test", true},
		{"npm run dev", "npm run", "shell", false},
		{"npm test", "npm test", "test", true},
		{"npm --prefix web run lint", "npm run", "test", true},
		{"pnpm install --frozen-lockfile", "pnpm install", "package", false},
		{"pnpm add zod", "pnpm add", "package", false},
		{"pnpm test", "pnpm test", "test", true},
		{"pnpm lint", "pnpm run", "test", true},
		{"pnpm --filter web typecheck", "pnpm run", "build", true},
		{"pnpm dev", "pnpm run", "shell", false},
		{"yarn", "yarn", "package", false},
		{"yarn add react", "yarn add", "package", false},
		{"yarn build", "yarn run", "build", true},
		{"bun test", "bun test", "test", true},
		{"bun install", "bun install", "package", false},
		{"bun run index.ts", "bun run", "shell", false},
		{"bun index.ts", "bun", "shell", false},
		{"pip install -r requirements.txt", "pip install", "package", false},
		{"pip3 install requests", "pip3 install", "package", false},
		{"python -m pip install -e .", "pip install", "package", false},
		{"uv pip install ruff", "uv pip", "package", false},
		{"uv sync", "uv sync", "package", false},
		{"poetry install", "poetry install", "package", false},
		{"cargo add serde", "cargo add", "package", false},
		{"go get github.com/x/y@v1", "go get", "package", false},
		{"go mod tidy", "go mod", "package", false},
		{"brew install jq", "brew install", "package", false},
		{"sudo apt-get install -y build-essential", "apt-get install", "package", false},
		// verify: tests
		{"pytest -q tests/test_api.py::test_x", "pytest", "test", true},
		{"python3 -m pytest -x", "pytest", "test", true},
		{".venv/bin/python -m pytest", "pytest", "test", true},
		{"python -m unittest discover", "unittest", "test", true},
		{"python manage.py test accounts", "python", "test", true},
		{"go test ./... -run TestX -count=1", "go test", "test", true},
		{"go test -race ./internal/...", "go test", "test", true},
		{"cargo test --workspace", "cargo test", "test", true},
		{"cargo +nightly test", "cargo test", "test", true},
		{"cargo nextest run", "cargo nextest", "test", true},
		{"npx jest src/foo.test.ts", "jest", "test", true},
		{"npx -y vitest run", "vitest", "test", true},
		{"./node_modules/.bin/mocha", "mocha", "test", true},
		{"bundle exec rspec spec/models", "rspec", "test", true},
		{"vendor/bin/phpunit --filter X", "phpunit", "test", true},
		{"mvn -q test", "mvn", "test", true},
		{"./gradlew test --tests X", "gradlew", "test", true},
		{"./gradlew assembleDebug", "gradlew", "build", true},
		{"gradle build", "gradle", "build", true},
		{"tox -e py311", "tox", "test", true},
		{"dotnet test", "dotnet test", "test", true},
		{"swift test", "swift test", "test", true},
		{"ctest --output-on-failure", "ctest", "test", true},
		{"make test", "make", "test", true},
		{"make check", "make", "test", true},
		{"make -C build -j8 all", "make", "build", true},
		{"make", "make", "build", true},
		{"make clean", "make", "build", false},
		{"make deploy-prod", "make", "build", false},
		{"deno test -A", "deno test", "test", true},
		{"npx playwright test", "playwright test", "test", true},
		{"node --test", "node", "test", true},
		// verify: lint and type checks
		{"eslint . --fix", "eslint", "test", true},
		{"ruff check .", "ruff check", "test", true},
		{"ruff format .", "ruff format", "shell", false},
		{"ruff format --check .", "ruff format", "test", true},
		{"golangci-lint run ./...", "golangci-lint run", "test", true},
		{"go vet ./...", "go vet", "test", true},
		{"cargo clippy -- -D warnings", "cargo clippy", "test", true},
		{"npx prettier --check .", "prettier", "test", true},
		{"npx prettier --write .", "prettier", "shell", false},
		{"shellcheck scripts/*.sh", "shellcheck", "test", true},
		{"mypy src", "mypy", "build", true},
		{"pyright", "pyright", "build", true},
		{"npx tsc --noEmit", "tsc", "build", true},
		{"tsc -p tsconfig.json", "tsc", "build", true},
		// verify: builds
		{"go build -o bin/app ./cmd/app", "go build", "build", true},
		{"cargo build --release", "cargo build", "build", true},
		{"cargo check", "cargo check", "build", true},
		{"npx vite build", "vite build", "build", true},
		{"next build", "next build", "build", true},
		{"gcc -O2 -o main main.c", "gcc", "build", true},
		{"cmake --build build", "cmake", "build", true},
		// cloud
		{"docker build -t app .", "docker build", "cloud", false},
		{"docker compose up -d --build", "docker compose up", "cloud", false},
		{"docker-compose logs -f api", "docker-compose logs", "cloud", false},
		{"kubectl get pods -n prod", "kubectl get", "cloud", false},
		{"terraform plan -out tf.plan", "terraform plan", "cloud", false},
		{"aws s3 cp a s3://bucket/key", "aws s3", "cloud", false},
		{"helm upgrade --install x ./chart", "helm upgrade", "cloud", false},
		// gh / glab
		{"gh pr create --fill", "gh pr create", "vcs", false},
		{"gh pr view 12 --json url", "gh pr view", "vcs", false},
		{"gh api repos/o/n/pulls", "gh api", "vcs", false},
		{"gh run watch", "gh run watch", "vcs", false},
		{"glab mr create --fill", "glab mr create", "vcs", false},
		// wrappers
		{"FOO=bar BAZ=1 npm test", "npm test", "test", true},
		{"sudo -u postgres psql -c 'select 1'", "psql", "shell", false},
		{"env -i PATH=/bin HOME=/x go test ./...", "go test", "test", true},
		{"time go build ./...", "go build", "build", true},
		{"/usr/bin/time -v make", "make", "build", true},
		{"nohup python server.py &", "python", "shell", false},
		{"exec node server.js", "node", "shell", false},
		{"command git status", "git status", "vcs", false},
		{"command -v git", "command", "shell", false},
		{"mise run test:integration -- -run TestX", "mise run", "test", true},
		{"mise r build", "mise run", "build", true},
		{"mise run serve", "mise run", "shell", false},
		{"mise install", "mise install", "shell", false},
		{"bd create --title=x --type=task", "bd create", "shell", false},
		{"bd secretword", "bd", "shell", false},
		{"timeout 120 pytest -x", "pytest", "test", true},
		{"timeout -s KILL 5m cargo test", "cargo test", "test", true},
		{"nice -n 10 make -j4", "make", "build", true},
		{"nice -10 go build", "go build", "build", true},
		{"exec > >(tee build.log) 2>&1; cargo build", "cargo build", "build", true},
		{"exec 3>&1", "exec", "shell", false},
		{"find . -name '*.pyc' | xargs -0 rm -f", "find", "fs", false},
		{"ls | xargs -I{} echo {}", "ls", "fs", false},
		{"sudo --weird-flag secretvalue cmd", "sudo", "shell", false},
		{"uv run --with requests python x.py", "python", "shell", false},
		{"uv run --unknown-flag val pytest", "uv run", "shell", false},
		{"npx create-next-app@latest my-app", "create-next-app", "shell", false},
		{"npx @biomejs/biome check .", "biome check", "test", true},
		{"poetry run pytest", "pytest", "test", true},
		{"op run --env-file .env -- npm test", "npm test", "test", true},
		{"op read op://vault/item", "op", "shell", false},
		{"pnpm dlx tsc --noEmit", "tsc", "build", true},
		// lists, pipelines, subshells, substitutions
		{"cd web && npm ci && npm test", "npm test", "test", true},
		{"cd /repo && git add -A && git commit -m 'x'", "git add", "vcs", false},
		{"set -euo pipefail; export X=1; source .env; curl -s http://x", "curl", "http", false},
		{"go test ./... 2>&1 | tail -20", "go test", "test", true},
		{"cat log.txt | grep ERROR | wc -l", "cat", "fs", false},
		{"(cd sub && make)", "make", "build", true},
		{"{ echo a; echo b; } > f", "echo", "shell", false},
		{"echo $(git rev-parse HEAD)", "echo", "shell", false},
		{"VERSION=$(git describe --tags)", "git describe", "vcs", false},
		{"if [ -f go.mod ]; then go build ./...; fi", "go build", "build", true},
		{"for f in *.py; do python $f; done", "python", "shell", false},
		{"while read l; do echo $l; done < file", "read", "shell", false},
		{"diff <(sort a) <(sort b)", "diff", "fs", false},
		{"cd repo", "cd", "shell", false},
		{"export FOO=bar", "export", "shell", false},
		{"FOO=bar", "", "shell", false},
		{"true && ls", "ls", "fs", false},
		{"npm install && npm run build", "npm run", "build", true},
		// inline scripts
		{"bash -lc 'cd repo && go test ./...'", "go test", "test", true},
		{`bash -c "npm ci && npm run lint"`, "npm run", "test", true},
		{`sh -c 'echo "$HOME"'`, "echo", "shell", false},
		{"zsh -ic 'git status'", "git status", "vcs", false},
		{"bash scripts/setup.sh", "bash", "shell", false},
		{`bash -c "$(curl -fsSL https://x.sh)"`, "curl", "http", false},
		{`powershell -NoProfile -Command "Get-ChildItem -Recurse"`, "Get-ChildItem", "fs", false},
		{`pwsh -c "npm test"`, "npm test", "test", true},
		{`cmd /c "dir /s"`, "dir", "fs", false},
		// heredocs
		{"cat > notes.txt <<'EOF'\nsecret text here\nEOF", "cat", "fs", false},
		{"python3 - <<EOF\nimport os\nprint(os.environ)\nEOF", "python3", "shell", false},
		{"git commit -F - <<EOF\nmessage $(date)\nEOF", "git commit", "vcs", false},
		// variables, broken input, PowerShell
		{"$CMD --flag", "", "shell", false},
		{`"$HOME/bin/tool" run`, "tool", "shell", false},
		{"${EDITOR:-vim} file", "", "shell", false},
		{`"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`, "check.sh", "shell", false},
		{"${ROOT}/bin/pytest -q", "pytest", "test", true},
		{"$DIR/$NAME", "", "shell", false},
		{`git commit -m "unterminated`, "git commit", "vcs", false},
		{`echo 'unterminated && rm -rf /`, "echo", "shell", false},
		{`"C:\Program Files\nodejs\npm.cmd" install`, "npm install", "package", false},
		{`$env:FOO = "bar"; npm test`, "npm test", "test", true},
		{`$env:FOO = "bar"`, "", "shell", false},
		{"Get-Content .\\log.txt | Select-String error", "Get-Content", "fs", false},
		{"", "", "shell", false},
		{"   ", "", "shell", false},
	}
	for _, tt := range tests {
		got := ParseShell(tt.cmd)
		if got.Verb != tt.verb || got.Cat != tt.cat || got.Verify != tt.verify {
			t.Errorf("ParseShell(%q) = verb %q cat %q verify %v; want %q %q %v",
				tt.cmd, got.Verb, got.Cat, got.Verify, tt.verb, tt.cat, tt.verify)
		}
		checkVerb(t, cite.Own([]byte(tt.cmd)), got.Verb)
	}
}

// checkVerb asserts the shape rules of every verb: at most three words, no
// flag, path, assignment, quote or expansion.
// checkVerb holds the verb of the command in to the shape of a verb;
// failures name in, never quote it (unless it is the test's own).
func checkVerb(t *testing.T, in cite.Line, verb string) {
	t.Helper()
	if verb == "" {
		return
	}
	words := strings.Split(verb, " ")
	if len(words) > 3 {
		t.Errorf("verb of %s has %d words: %s", in, len(words), in.Part([]byte(verb)))
	}
	for _, w := range words {
		if w == "" || strings.HasPrefix(w, "-") || strings.ContainsAny(w, "/\\=\"'`$(){}<>*?;|&~ \t\n") {
			t.Errorf("verb of %s has a bad word %s", in, in.Part([]byte(w)))
		}
	}
}

func TestParseShellVCS(t *testing.T) {
	tests := []struct {
		cmd  string
		want *event.VCS
	}{
		{"git status", &event.VCS{Provider: "git", Action: "status"}},
		{"git add -A && git commit -m x && git push", &event.VCS{Provider: "git", Action: "commit"}},
		{"git log && git push origin main", &event.VCS{Provider: "git", Action: "push"}},
		{"git push && gh pr create --fill", &event.VCS{Provider: "github", Action: "pr_create"}},
		{"gh pr view 123", &event.VCS{Provider: "github", Action: "pr_view", Number: 123}},
		{"gh pr view '#45'", &event.VCS{Provider: "github", Action: "pr_view", Number: 45}},
		{"gh pr merge https://github.com/acme/api/pull/7 --squash", &event.VCS{Provider: "github", Action: "pr_merge", Repo: "acme/api", Number: 7}},
		{"gh -R acme/web issue view 9", &event.VCS{Provider: "github", Action: "issue_view", Repo: "acme/web", Number: 9}},
		{"gh pr checks 12 --repo acme/api", &event.VCS{Provider: "github", Action: "pr_checks", Repo: "acme/api", Number: 12}},
		{"gh api repos/x/y", &event.VCS{Provider: "github", Action: "api"}},
		{"glab mr merge 4", &event.VCS{Provider: "gitlab", Action: "mr_merge", Number: 4}},
		{"gh pr view feature-branch", &event.VCS{Provider: "github", Action: "pr_view"}},
		{"git", nil},
		{"ls", nil},
	}
	for _, tt := range tests {
		got := ParseShell(tt.cmd).VCS
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("ParseShell(%q).VCS = %+v, want %+v", tt.cmd, got, tt.want)
		}
	}
}

func TestParseShellCommits(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{"git commit -m x", true},
		{"git restore --staged README.md && git status -s && git commit -m x", true},
		{"git commit -m x && gh pr create --fill", true},
		{"bash -lc 'git add -A && git commit -m x'", true},
		{"git log --grep commit", false},
		{"echo commit", false},
	}
	for _, tt := range tests {
		if got := ParseShell(tt.cmd).Commits; got != tt.want {
			t.Errorf("ParseShell(%q).Commits = %v, want %v", tt.cmd, got, tt.want)
		}
	}
}

func TestParseArgv(t *testing.T) {
	tests := []struct {
		argv   []string
		verb   string
		verify bool
	}{
		{[]string{"bash", "-lc", "cd /w && cargo test"}, "cargo test", true},
		{[]string{"/bin/zsh", "-lc", "git status --short"}, "git status", false},
		{[]string{"git", "diff", "--stat"}, "git diff", false},
		{[]string{"powershell.exe", "-Command", "npm", "run", "build"}, "npm run", true},
		{[]string{"rg", "-n", "TODO"}, "rg", false},
		{[]string{"bash", "-c"}, "bash", false},
		{[]string{"sh", "-c", "pytest -q 'tests/it s'"}, "pytest", true},
		{nil, "", false},
		{[]string{""}, "", false},
	}
	for _, tt := range tests {
		got := ParseArgv(tt.argv)
		if got.Verb != tt.verb || got.Verify != tt.verify {
			t.Errorf("ParseArgv(%q) = %q %v; want %q %v", tt.argv, got.Verb, got.Verify, tt.verb, tt.verify)
		}
		checkVerb(t, cite.Own([]byte(strings.Join(tt.argv, " "))), got.Verb)
	}
}

func TestShellKind(t *testing.T) {
	if k := ParseShell("pytest").Kind(); k != "verify" {
		t.Errorf("pytest kind = %q", k)
	}
	if k := ParseShell("ls").Kind(); k != "exec" {
		t.Errorf("ls kind = %q", k)
	}
}

// The canary test: commands full of secrets in every position an argument
// can take. No verb may contain any part of them.
func TestParseShellCanary(t *testing.T) {
	const c = "canarysecret"
	cmds := []string{
		"curl -H 'Authorization: Bearer canarysecret' https://canarysecret.example.com",
		"export TOKEN=canarysecret && npm publish",
		"TOKEN=canarysecret ./deploy.sh",
		"git commit -m 'canarysecret'",
		"git commit -m canarysecret",
		"git canarysecret",
		"npm run canarysecret",
		"pnpm canarysecret",
		"yarn canarysecret",
		"bun canarysecret",
		"make canarysecret",
		"gh pr create --title canarysecret --body canarysecret",
		"gh pr canarysecret",
		"gh canarysecret view",
		"docker compose canarysecret",
		"docker run -e KEY=canarysecret img",
		"kubectl canarysecret",
		"sudo -u canarysecret ls",
		"sudo --canarysecret ls",
		"env X=canarysecret Y=canarysecret go test",
		"timeout canarysecret ls",
		"xargs -I canarysecret echo",
		"npx --canarysecret tool",
		"uv run --canarysecret pytest",
		"echo canarysecret | base64",
		"python -c 'print(\"canarysecret\")'",
		"python -m canarysecret",
		"bash -c 'echo canarysecret'",
		"bash -lc \"git commit -m canarysecret\"",
		"cat <<EOF\ncanarysecret\nEOF",
		"mysql -pcanarysecret -e 'select 1'",
		"echo 'canarysecret && canarysecret",
		"psql postgres://user:canarysecret@host/db",
		"aws --profile canarysecret s3 ls",
		"gcloud canarysecret-canarysecret",
		"gcloud --canary canarysecret compute",
		"az canarysecret",
		"npx tool@1.0.0 --token canarysecret",
		"cd canarysecret && ls canarysecret",
		"echo `cat canarysecret`",
		"echo $(cat canarysecret)",
		"terraform apply -var secret=canarysecret",
		"canarysecret=1 canarysecret=2",
		"git -c credential.helper=canarysecret push",
		"$canarysecret",
		"pwsh -Command \"$x = 'canarysecret'\"",
	}
	for _, cmd := range cmds {
		s := ParseShell(cmd)
		if strings.Contains(strings.ToLower(s.Verb), c) {
			t.Errorf("ParseShell(%q) leaked into verb %q", cmd, s.Verb)
		}
		if s.VCS != nil && (strings.Contains(s.VCS.Action, c) || strings.Contains(s.VCS.Repo, c)) {
			t.Errorf("ParseShell(%q) leaked into VCS %+v", cmd, s.VCS)
		}
		checkVerb(t, cite.Own([]byte(cmd)), s.Verb)
		a := ParseArgv(strings.Fields(cmd))
		if strings.Contains(strings.ToLower(a.Verb), c) {
			t.Errorf("ParseArgv(%q) leaked into verb %q", cmd, a.Verb)
		}
	}
}

func BenchmarkParseShell(b *testing.B) {
	cmds := []string{
		"git status",
		"cd /repo/web && npm ci && npm run test -- --coverage 2>&1 | tail -50",
		"bash -lc 'source .venv/bin/activate && python -m pytest -x tests/'",
		"cat > f.txt <<'EOF'\n" + strings.Repeat("line of a file\n", 200) + "EOF",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ParseShell(cmds[i%len(cmds)])
	}
}

// ParseShell runs on every shell call of every log, from any goroutine.
func TestParseShellConcurrent(t *testing.T) {
	done := make(chan Shell)
	for range 8 {
		go func() {
			var s Shell
			for range 200 {
				s = ParseShell("cd x && bash -lc 'go test ./...' | tee log")
			}
			done <- s
		}()
	}
	for range 8 {
		if s := <-done; s.Verb != "go test" || !s.Verify {
			t.Errorf("concurrent ParseShell = %+v", s)
		}
	}
}
