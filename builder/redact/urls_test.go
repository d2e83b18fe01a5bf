package redact

import "testing"

func TestHost(t *testing.T) {
	tests := map[string]string{
		"https://Docs.Example.COM/path?q=1":       "docs.example.com",
		"http://user:pass@api.example.com:8080/x": "api.example.com",
		"https://[2001:db8::1]:443/":              "2001:db8::1",
		"//cdn.example.org/lib.js":                "cdn.example.org",
		"https://example.com.":                    "example.com",
		"https://bücher.de/x":                     "bücher.de",
		"ftp://files.example.net/a":               "files.example.net",
		"example.com/path":                        "",
		"not a url":                               "",
		"":                                        "",
		"https://":                                "",
		"https://exa mple.com/":                   "",
		"mailto:someone@example.com":              "",
		"https://evil.com\\@good.com/":            "",
		"  https://padded.example.com/x  ":        "padded.example.com",
		"http://127.0.0.1:3000/api":               "127.0.0.1",
		"https://sub_domain.example.com/":         "sub_domain.example.com",
		"javascript:alert(1)":                     "",
		"https://example.com/%zz":                 "",
		"https://a.b.c.d.e.f.example.co.uk/x/y/z": "a.b.c.d.e.f.example.co.uk",
	}
	for in, want := range tests {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCountURLs(t *testing.T) {
	tests := map[string]int{
		"":              0,
		"no links here": 0,
		"see https://example.com and http://x.org":  2,
		"HTTPS://EXAMPLE.COM/A":                     1,
		"(https://a.com)[https://b.com]":            2,
		"http://":                                   0,
		"https:// spaced":                           0,
		"xhttps://not.a.scheme":                     0,
		"ftp://files.example.com":                   0,
		"https://[::1]:8080/":                       1,
		"line1\nhttps://a.com/x?y=1\nhttp://b.com/": 2,
		"mid-word:https://a.com":                    1,
	}
	for in, want := range tests {
		if got := CountURLs(in); got != want {
			t.Errorf("CountURLs(%q) = %d, want %d", in, got, want)
		}
	}
}
