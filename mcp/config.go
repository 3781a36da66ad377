package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Config is an MCP configuration file, in the shape Claude Desktop, Cursor
// and most assistants use:
//
//	{"mcpServers": {
//	  "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/src"]},
//	  "tracker": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer …"}}
//	}}
type Config struct {
	// Servers are the servers by name. The name prefixes their tools'
	// names (see [ToolName]).
	Servers map[string]ServerConfig `json:"mcpServers"`
}

// ServerConfig is one server: a command that speaks MCP on its stdin and
// stdout, or the URL of a streamable HTTP server.
type ServerConfig struct {
	// Command and Args start a stdio server. Env is added to ptk's own
	// environment less its secrets (every variable whose name says it
	// holds a key, token or password, such as OPENAI_API_KEY, and the trace
	// store's address: see internal/secretenv), so a key the server needs
	// goes here; Cwd, when set, is the folder it starts in.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// URL is a streamable HTTP server's endpoint; Headers are sent with
	// every request (an Authorization header, usually).
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Type is "stdio", "http" or "streamable-http", or empty: what the other
	// fields say. Other values ("sse") are refused.
	Type string `json:"type,omitempty"`
	// Disabled leaves the server out, as in other clients' files.
	Disabled bool `json:"disabled,omitempty"`
	// Timeout, when set ("90s", "5m"), bounds each call to the server's
	// tools instead of [Options.CallTimeout].
	Timeout Duration `json:"timeout,omitempty"`
}

// Duration is a time.Duration written in JSON as a string ("30s") or as a
// number of milliseconds.
type Duration time.Duration

// UnmarshalJSON reads "30s" or 30000.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil || v < 0 {
			return fmt.Errorf("timeout %q: write a duration such as \"30s\" or \"5m\"", s)
		}
		*d = Duration(v)
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil || ms < 0 {
		return fmt.Errorf("timeout %s: write a duration such as \"30s\", or milliseconds", b)
	}
	*d = Duration(time.Duration(ms * float64(time.Millisecond)))
	return nil
}

// String writes the duration as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string ("30s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// DefaultConfigFile is where ptk looks for the MCP configuration when none
// is named: mcp.json in ptk's config folder (~/.config/ptk/mcp.json on
// Linux). It is never read from a workspace, which a model may write.
func DefaultConfigFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "ptk", "mcp.json"), nil
}

// LoadConfig reads and checks a configuration file.
func LoadConfig(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}

// ParseConfig reads and checks a configuration. Unknown fields are
// allowed, since other clients write their own into the same file; what
// ptk reads must make sense: each server has a command or a URL (not
// both), and no two servers' names make the same tool-name prefix.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&c); err != nil {
		return nil, fmt.Errorf("not an MCP configuration: %w", err)
	}
	if c.Servers == nil {
		var probe map[string]json.RawMessage
		if json.Unmarshal(data, &probe) != nil || probe["mcpServers"] == nil {
			return nil, errors.New(`not an MCP configuration: no "mcpServers" object`)
		}
	}
	prefixes := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		p := serverPrefix(name)
		if p == "" {
			return nil, fmt.Errorf("server %q: the name needs a letter or a digit", name)
		}
		if other, dup := prefixes[p]; dup {
			return nil, fmt.Errorf("servers %q and %q both name their tools %s__…: rename one", other, name, p)
		}
		prefixes[p] = name
	}
	return &c, nil
}

func (s ServerConfig) check() error {
	switch s.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp":
	default:
		return fmt.Errorf("type %q is not supported (ptk speaks stdio and streamable HTTP)", s.Type)
	}
	switch {
	case s.Command == "" && s.URL == "":
		return errors.New(`give a "command" (stdio) or a "url" (streamable HTTP)`)
	case s.Command != "" && s.URL != "":
		return errors.New(`give a "command" or a "url", not both`)
	case s.URL != "" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
		return fmt.Errorf("url %q: only http:// and https:// are supported", s.URL)
	}
	return nil
}

// enabled returns the names of the servers to start, sorted.
func (c *Config) enabled() []string {
	var out []string
	for name, s := range c.Servers {
		if !s.Disabled {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
