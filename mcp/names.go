package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLen is the longest tool name every provider accepts
// (^[a-zA-Z0-9_-]{1,64}$).
const MaxNameLen = 64

// maxPrefixLen caps a server's part of a tool name, so that at least 32
// characters are left for the tool's own name.
const maxPrefixLen = 30

// ToolName returns the name ptk gives the tool named tool of the server
// named server: server__tool, valid for every provider
// (^[a-zA-Z0-9_-]{1,64}$), and different for every different pair.
//
// The server's part is its name with every other character than a letter,
// a digit or "-" made "_", runs of "_" made one, no "_" at either end, and
// at most 30 characters; [ParseConfig] refuses two servers with the same
// part. Because that part never holds "__" nor ends with "_", the first
// "__" of a name always ends it, so server__tool names cannot collide.
// When the tool's own name is not valid as it is (a "." or a "/", which
// MCP allows) or the whole would pass 64 characters, the tool's part is
// its cleaned name, cut to fit, followed by "_" and 8 hex digits of a hash
// of the server's and the tool's names: still unique, and stable from one
// run to the next.
func ToolName(server, tool string) string {
	p := serverPrefix(server)
	name := p + "__" + tool
	if validName(tool) && len(name) <= MaxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	clean := cleanName(tool)
	if room := MaxNameLen - len(p) - 2 - len(suffix); len(clean) > room {
		clean = clean[:room]
	}
	return p + "__" + clean + suffix
}

// serverPrefix is a server's part of its tools' names.
func serverPrefix(server string) string {
	var b strings.Builder
	for _, r := range server {
		if isNameChar(r) && r != '_' {
			b.WriteRune(r)
			continue
		}
		if s := b.String(); s != "" && !strings.HasSuffix(s, "_") {
			b.WriteByte('_')
		}
	}
	p := strings.TrimRight(b.String(), "_")
	if len(p) > maxPrefixLen {
		p = strings.TrimRight(p[:maxPrefixLen], "_")
	}
	return p
}

// cleanName replaces every character that a tool name may not hold by "_".
func cleanName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isNameChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isNameChar(r) {
			return false
		}
	}
	return true
}

func isNameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
