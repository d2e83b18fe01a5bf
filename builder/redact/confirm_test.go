package redact

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

func TestConfirmPR(t *testing.T) {
	tests := []struct {
		name, out, action string
		want              *event.PR
	}{
		{"gh pr create", "Creating pull request for feat into main in acme/api\n\nhttps://github.com/acme/api/pull/142\n", "create",
			&event.PR{Action: "create", Provider: "github", Repo: "acme/api", Number: 142, URL: "https://github.com/acme/api/pull/142"}},
		{"default action", "https://github.com/acme/api/pull/7", "",
			&event.PR{Action: "create", Provider: "github", Repo: "acme/api", Number: 7, URL: "https://github.com/acme/api/pull/7"}},
		{"query and fragment dropped", "see https://github.com/acme/api/pull/9/files?diff=split#r123 now", "comment",
			&event.PR{Action: "comment", Provider: "github", Repo: "acme/api", Number: 9, URL: "https://github.com/acme/api/pull/9"}},
		{"credentials dropped", "https://x:tok@github.com/acme/api/pull/3", "create",
			&event.PR{Action: "create", Provider: "github", Repo: "acme/api", Number: 3, URL: "https://github.com/acme/api/pull/3"}},
		{"last wins", "Warning: see https://github.com/acme/old/pull/1 first\nhttps://github.com/acme/api/pull/2\n", "create",
			&event.PR{Action: "create", Provider: "github", Repo: "acme/api", Number: 2, URL: "https://github.com/acme/api/pull/2"}},
		{"enterprise", "https://GitHub.Corp.example/team/svc/pull/12", "create",
			&event.PR{Action: "create", Provider: "github", Repo: "team/svc", Number: 12, URL: "https://github.corp.example/team/svc/pull/12"}},
		{"gitlab mr", "!12 Fix things\n https://gitlab.com/grp/sub/tool/-/merge_requests/12\n", "create",
			&event.PR{Action: "create", Provider: "gitlab", Repo: "sub/tool", Number: 12, URL: "https://gitlab.com/grp/sub/tool/-/merge_requests/12"}},
		{"bitbucket", "Created https://bitbucket.org/team/repo/pull-requests/5/overview", "create",
			&event.PR{Action: "create", Provider: "bitbucket", Repo: "team/repo", Number: 5, URL: "https://bitbucket.org/team/repo/pull-requests/5"}},
		{"bitbucket server", "https://git.corp/projects/PRJ/repos/app/pull-requests/44", "create",
			&event.PR{Action: "create", Provider: "bitbucket", Repo: "PRJ/app", Number: 44, URL: "https://git.corp/projects/PRJ/repos/app/pull-requests/44"}},
		{"merged text", "✓ Squashed and merged pull request acme/api#88 (Add things)\n✓ Deleted branch x", "merge",
			&event.PR{Action: "merge", Provider: "github", Repo: "acme/api", Number: 88}},
		{"merged text no repo", "✓ Merged pull request #31 (secret title)", "merge",
			&event.PR{Action: "merge", Provider: "github", Number: 31}},
		{"closed text", "✓ Closed pull request #4 (title)", "close",
			&event.PR{Action: "close", Provider: "github", Number: 4}},
		{"text not for create", "✓ Merged pull request #31", "create", nil},
		{"issue url", "https://github.com/acme/api/issues/5", "create", nil},
		{"not a number", "https://github.com/acme/api/pull/new/branch", "create", nil},
		{"pull on other host", "https://example.com/acme/api/pull/5", "create", nil},
		{"nothing", "error: could not create pull request", "create", nil},
		{"empty", "", "create", nil},
	}
	for _, tt := range tests {
		got := ConfirmPR(tt.out, tt.action)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ConfirmPR = %+v, want %+v", tt.name, got, tt.want)
		}
		if got != nil && strings.Contains(got.URL+got.Repo, "title") {
			t.Errorf("%s: text leaked: %+v", tt.name, got)
		}
	}
}

func TestConfirmCommit(t *testing.T) {
	tests := []struct {
		name, out string
		want      *event.Commit
	}{
		{"full", "[main 1a2b3c4] Fix the secret bug\n 3 files changed, 10 insertions(+), 2 deletions(-)\n",
			&event.Commit{SHA: "1a2b3c4", Files: 3, Ins: 10, Del: 2}},
		{"root commit", "[master (root-commit) 0f1e2d3] init\n 1 file changed, 1 insertion(+)\n create mode 100644 a\n",
			&event.Commit{SHA: "0f1e2d3", Files: 1, Ins: 1}},
		{"deletions only", "[feature/x-y abcdef0123] msg\n 2 files changed, 5 deletions(-)",
			&event.Commit{SHA: "abcdef0123", Files: 2, Del: 5}},
		{"detached", "[detached HEAD 9f8e7d6] msg\n 1 file changed, 0 insertions(+), 0 deletions(-)",
			&event.Commit{SHA: "9f8e7d6", Files: 1}},
		{"after hooks", "black....Passed\nruff.....Passed\n[dev 1234567] wip\r\n 4 files changed, 40 insertions(+)\r\n",
			&event.Commit{SHA: "1234567", Files: 4, Ins: 40}},
		{"no stats", "[main 1a2b3c4] msg", &event.Commit{SHA: "1a2b3c4"}},
		{"full sha", "[main 0123456789abcdef0123456789abcdef01234567] m", &event.Commit{SHA: "0123456789abcdef0123456789abcdef01234567"}},
		{"not hex", "[main zzzzzzz] msg", nil},
		{"too short", "[main abc12] msg", nil},
		{"one field", "[1a2b3c4] msg", nil},
		{"upper hex", "[main 1A2B3C4] msg", nil},
		{"nothing to commit", "On branch main\nnothing to commit, working tree clean\n", nil},
		{"stats without commit", " 3 files changed, 1 insertion(+)", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		got := ConfirmCommit(tt.out)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ConfirmCommit = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestHeadSHA(t *testing.T) {
	for in, want := range map[string]string{
		"9f3c2ab1 fix the thing\n":                                          "9f3c2ab1",
		"commit 0123456789abcdef0123456789abcdef01234567\nAuthor: x\n":      "0123456789abcdef0123456789abcdef01234567",
		"0123456789ABCDEF0123456789abcdef01234567\n":                        "0123456789abcdef0123456789abcdef01234567",
		"\n  \nabc1234 (HEAD -> main) msg":                                  "abc1234",
		"fatal: your current branch 'main' does not have any commits yet\n": "",
		"On branch main\nabc1234 x":                                         "",
		"abc12 short":                                                       "",
	} {
		if got := HeadSHA(in); got != want {
			t.Errorf("HeadSHA(%q) = %q, want %q", in, got, want)
		}
	}
}
