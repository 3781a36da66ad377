package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var validToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, tc := range []struct{ server, tool, want string }{
		{"files", "read_file", "files__read_file"},
		{"everything", "get-sum", "everything__get-sum"},
		{"my.server", "echo", "my_server__echo"},
		{"My Server!", "echo", "My_Server__echo"},
		{"a__b", "c", "a_b__c"},
		{"_x_", "y", "x__y"},
		{"tracker", "issues.list", "tracker__issues_list_"}, // then a hash
		{"tracker", "issues/list", "tracker__issues_list_"},
		{"s", long, "s__" + long[:64-3-9] + "_"},
		{strings.Repeat("z", 40), "t", strings.Repeat("z", 30) + "__t"},
	} {
		got := ToolName(tc.server, tc.tool)
		if !validToolName.MatchString(got) {
			t.Errorf("ToolName(%q, %q) = %q: not a valid name", tc.server, tc.tool, got)
		}
		if got != tc.want && !(strings.HasSuffix(tc.want, "_") && strings.HasPrefix(got, tc.want) && len(got) == len(tc.want)+8) {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
		if again := ToolName(tc.server, tc.tool); again != got {
			t.Errorf("ToolName(%q, %q) is not stable: %q then %q", tc.server, tc.tool, got, again)
		}
	}
}

// TestToolNamesDoNotCollide names every pair of a set of awkward server
// and tool names, meant to collide under a careless scheme. Servers whose
// names clean to the same prefix ("a" and "a_") cannot be in one
// configuration (TestParseConfig), so only one of each is named.
func TestToolNamesDoNotCollide(t *testing.T) {
	servers := []string{"a", "a_b", "a__b_", "b", "x-y", "x_y_", strings.Repeat("s", 29), strings.Repeat("s", 30), strings.Repeat("s", 31)}
	tools := []string{"b", "_b", "b__c", "c", "b_c", "b.c", "b/c", "b-c", "__", "_", strings.Repeat("t", 40), strings.Repeat("t", 41), strings.Repeat("t", 40) + ".", "b.c_8c1d9c37"}
	seen := map[string]string{}
	prefixes := map[string]bool{}
	for _, s := range servers {
		if prefixes[serverPrefix(s)] {
			continue
		}
		prefixes[serverPrefix(s)] = true
		for _, tl := range tools {
			got := ToolName(s, tl)
			if !validToolName.MatchString(got) {
				t.Errorf("ToolName(%q, %q) = %q: not a valid name", s, tl, got)
			}
			key := s + " / " + tl
			if other, dup := seen[got]; dup {
				t.Errorf("%s and %s are both %q", other, key, got)
			}
			seen[got] = key
		}
	}
	if len(prefixes) != 7 {
		t.Errorf("%d distinct prefixes: %v", len(prefixes), prefixes)
	}
}

func TestParseConfig(t *testing.T) {
	good := `{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/src"], "env": {"A": "1"}},
		"web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}, "timeout": "90s"},
		"off": {"command": "nothing", "disabled": true}
	}, "globalShortcut": "Ctrl+Space"}`
	c, err := ParseConfig([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.enabled(); strings.Join(got, ",") != "files,web" {
		t.Errorf("enabled: %v", got)
	}
	if c.Servers["web"].Timeout.String() != "1m30s" {
		t.Errorf("timeout: %v", c.Servers["web"].Timeout)
	}
	for _, tc := range []struct{ config, says string }{
		{`{"servers": {}}`, `no "mcpServers"`},
		{`[1]`, "not an MCP configuration"},
		{`{"mcpServers": {"x": {}}}`, `give a "command"`},
		{`{"mcpServers": {"x": {"command": "a", "url": "http://b"}}}`, "not both"},
		{`{"mcpServers": {"x": {"url": "ws://b"}}}`, "only http:// and https://"},
		{`{"mcpServers": {"x": {"url": "http://b", "type": "sse"}}}`, `type "sse" is not supported`},
		{`{"mcpServers": {"my.files": {"command": "a"}, "my_files": {"command": "b"}}}`, "both name their tools my_files__"},
		{`{"mcpServers": {"!!": {"command": "a"}}}`, "needs a letter or a digit"},
		{`{"mcpServers": {"x": {"command": "a", "timeout": "soon"}}}`, "write a duration"},
	} {
		_, err := ParseConfig([]byte(tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want an error saying %q", tc.config, err, tc.says)
		}
	}
}
