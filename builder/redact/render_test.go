package redact

import "testing"

// Expected values computed independently with Python's hashlib and hmac.
func TestRenderer(t *testing.T) {
	tests := []struct {
		mode     Mode
		key      string
		applied  Mode
		in, want string
	}{
		{ModeRelative, "", ModeRelative, "src/orders.ts", "src/orders.ts"},
		{"", "", ModeRelative, "a/b/c.go", "a/b/c.go"},
		{ModeDirsOnly, "", ModeDirsOnly, "src/orders.ts", "src/•edd1eb"},
		{ModeDirsOnly, "k3y", ModeDirsOnly, "README.md", "•b33563"},
		{ModeDirsOnly, "", ModeDirsOnly, "a/b/c.go", "a/b/•f41437"},
		{ModeHashed, "k3y", ModeHashed, "src/orders.ts", "695fe67388/bc20480429"},
		{ModeHashed, "k3y", ModeHashed, "README.md", "6c5e459a81"},
		{ModeHashed, "k3y", ModeHashed, "a/b/c.go", "669a0fcc11/a2a9b14c74/0c52f4b278"},
		{ModeHashed, "", ModeDirsOnly, "src/orders.ts", "src/•edd1eb"},
		{"bogus", "", ModeDirsOnly, "README.md", "•b33563"},
		{ModeHashed, "k3y", ModeHashed, ".", "."},
		{ModeDirsOnly, "", ModeDirsOnly, ".", "."},
		{ModeDirsOnly, "", ModeDirsOnly, "", ""},
	}
	for _, tt := range tests {
		var key []byte
		if tt.key != "" {
			key = []byte(tt.key)
		}
		r := NewRenderer(tt.mode, key)
		if r.Mode() != tt.applied {
			t.Errorf("NewRenderer(%q, %q).Mode() = %q, want %q", tt.mode, tt.key, r.Mode(), tt.applied)
		}
		if got := r.Path(tt.in); got != tt.want {
			t.Errorf("%s(%q) = %q, want %q", tt.mode, tt.in, got, tt.want)
		}
		// Rendering is stable across calls (the HMAC state is reset).
		if got := r.Path(tt.in); got != tt.want {
			t.Errorf("second %s(%q) = %q, want %q", tt.mode, tt.in, got, tt.want)
		}
	}
}

func BenchmarkRendererHashed(b *testing.B) {
	r := NewRenderer(ModeHashed, []byte("key"))
	b.ReportAllocs()
	for b.Loop() {
		r.Path("internal/service/orders/handler.go")
	}
}
