package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// endlessPages is a hand-made stdio server whose tools/list never ends:
// each page holds 200 tools and a cursor to one more page.
func endlessPages() {
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Cursor          string `json:"cursor"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		var result string
		switch req.Method {
		case "initialize":
			result = fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"pages","version":"1"}}`, req.Params.ProtocolVersion)
		case "tools/list":
			page, _ := strconv.Atoi(req.Params.Cursor)
			var b bytes.Buffer
			b.WriteString(`{"tools":[`)
			for i := range 200 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"name":"t%d_%d","description":"%s","inputSchema":{"type":"object"}}`, page, i, strings.Repeat("x", 1000))
			}
			fmt.Fprintf(&b, `],"nextCursor":"%d"}`, page+1)
			result = b.String()
		default:
			result = `{}`
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
		out.Flush()
	}
}

// The attack: a server whose list of tools never ends (every page names a
// next one) or holds tens of thousands of tools. ptk kept reading pages
// until the start timed out, holding every tool in memory, and the server
// was lost; had it stopped at 30,000 tools, every prompt would have held
// them all. ptk keeps the first MaxTools, says so, and goes on.
func TestEndlessToolList(t *testing.T) {
	var log bytes.Buffer
	start := time.Now()
	c, err := startFake(t, Options{StartTimeout: 20 * time.Second, Logger: slog.New(slog.NewTextHandler(&log, nil))},
		map[string]ServerConfig{"pages": fakeConfig("pages")})
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
	if n := len(c.Tools()); n != DefaultMaxTools {
		t.Errorf("%d tools kept, want the first %d", n, DefaultMaxTools)
	}
	if !strings.Contains(log.String(), "more tools than") {
		t.Errorf("the cut was not said:\n%s", log.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the start took %v", d)
	}
	if _, err := c.Tools()[0].Run(context.Background(), json.RawMessage(`{}`)); err != nil {
		t.Errorf("the server is not usable: %v", err)
	}
}
