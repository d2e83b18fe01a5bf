package agentscope

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The published example trace is valid with no warning, as AgentScope's own
// tests require; broken copies of it fail on the rule each one breaks.
func TestValidateExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "schemas", "agentscope-example-auth-fix.trace.json"))
	if err != nil {
		t.Skipf("example trace not available: %v", err)
	}
	warns, err := Validate(data)
	if err != nil || len(warns) > 0 {
		t.Fatalf("example: err %v, warnings %v", err, warns)
	}
	tests := []struct{ from, to, want string }{
		{`"schemaVersion": "1.0.0"`, `"schemaVersion": "1.0"`, "schemaVersion"},
		{`"branch": "fix/auth-token-expiry"`, `"branch": ""`, "field branch"},
		{`"status": "passed"`, `"status": "ok"`, "status"},
		{`"trustScore": 92`, `"trustScore": 101`, "trustScore"},
		{`"type": "read_file"`, `"type": "read"`, "type"},
		{`"risk": "low"`, `"risk": "none"`, "risk"},
		{`"file": "src/auth/session.test.ts"`, `"file": null`, "file"},
	}
	for _, tt := range tests {
		broken := strings.Replace(string(data), tt.from, tt.to, 1)
		if broken == string(data) {
			t.Fatalf("%s: replacement did not apply", tt.want)
		}
		if _, err := Validate([]byte(broken)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v", tt.want, err)
		}
	}
}

func TestWarnings(t *testing.T) {
	doc := `{"schemaVersion":"1.0.0","runs":[{"id":"r","title":"t","agent":"a","branch":"b","status":"passed",
	"trustScore":50,"startedAt":"s","duration":"1s","cost":"$0","filesChanged":1,"commands":0,"actions":[
	{"id":"a1","type":"edit_file","title":"t","timestamp":"x","duration":"1s","risk":"high","summary":"s","details":[]},
	{"id":"a2","type":"test_failed","title":"t","timestamp":"x","duration":"1s","risk":"low","summary":"s","details":[]}]}]}`
	warns, err := Validate([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 2 {
		t.Errorf("warnings %q, want failed-test and high-risk ones", warns)
	}
}
