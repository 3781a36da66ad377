package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/browser/browsertest"
)

// codeWordPage is a chat page whose "model" reads notes.txt with a PTK
// call and answers with what the call's result says, and rates reviews in
// a ptool's answer tags.
func codeWordPage(t *testing.T) *browsertest.Page {
	return browsertest.NewPage(t, browsertest.Options{Reply: func(m string) browsertest.Reply {
		switch {
		case strings.Contains(m, "<answer>"):
			return browsertest.Reply{Text: "<answer>{\"stars\": 5, \"why\": \"loves it\"}</answer>"}
		case !strings.Contains(m, "<PTK_CALL>"):
			return browsertest.Reply{Text: "I was not taught the protocol."}
		case strings.Contains(m, "The code word is PERSIMMON"):
			return browsertest.Reply{Text: "The note says the code word is PERSIMMON."}
		}
		return browsertest.Reply{Text: "I will read it.\n\n<PTK_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"notes.txt\"}}\n</PTK_CALL>"}
	}})
}

// TestBrowserModel: a chat page in a real headless Chromium, as the model
// of ptk run (a PTK tool call, then the answer), of ptk serve (the
// gateway's upstream), of a ptool in protocol mode, listed by ptk models,
// and of ptk chat in a terminal.
func TestBrowserModel(t *testing.T) {
	exe, err := browsertest.ChromiumPath()
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("PTK_TEST_CHROMIUM") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	chromium, err := browsertest.StartChromium(exe, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chromium.Close)
	page := codeWordPage(t)
	dir := t.TempDir()
	site := page.SiteFile(t, dir, "testchat")
	cat := filepath.Join(dir, "models.json")
	os.WriteFile(cat, []byte(fmt.Sprintf(`{"providers": {"browser": {"api": "browser", "api_base": %q}},
		"models": {"browser:testchat": {"provider": "browser", "model_id": %q, "tool_protocol": "ptk", "streaming": true}}}`, chromium.URL, site)), 0o644)
	ws := workspace(t)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("The code word is PERSIMMON.\n"), 0o644)

	t.Run("run", func(t *testing.T) {
		before := len(page.Messages())
		code, out, errOut := runPTK(t, "", "run", "--models", cat, "--model", "browser:testchat", "--workspace", ws, "--json", "What is the code word in notes.txt?")
		if code != 0 {
			t.Fatalf("exit %d: %s %s", code, out, errOut)
		}
		var res struct {
			Success   bool
			Content   string
			ToolCalls []struct {
				Tool string
				Args map[string]any
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !res.Success || res.Content != "The note says the code word is PERSIMMON." || len(res.ToolCalls) != 1 ||
			res.ToolCalls[0].Tool != "read_file" || res.ToolCalls[0].Args["path"] != "notes.txt" {
			t.Errorf("result %s", out)
		}
		msgs := page.Messages()[before:]
		if len(msgs) != 2 || !strings.Contains(msgs[0].Text, "## read_file") || !strings.Contains(msgs[1].Text, "<PTK_RESULT") {
			t.Errorf("the page got %d messages: %+v", len(msgs), msgs)
		}
	})

	t.Run("models", func(t *testing.T) {
		code, out, _ := runPTK(t, "", "models", "--models", cat)
		for _, s := range []string{"browser:testchat", "browser:chatgpt", "browser:claude", "browser:gemini", "browser:aistudio"} {
			if code != 0 || !strings.Contains(out, s) {
				t.Errorf("ptk models lacks %s:\n%s", s, out)
			}
		}
	})

	t.Run("serve", func(t *testing.T) {
		url := startServe(t, "--models", cat, "--model", "browser:testchat")
		body := `{"model": "browser:testchat", "messages": [{"role": "user", "content": "What is the code word in notes.txt?"}],
		  "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]}`
		status, out := postChat(t, url, "", body)
		if status != http.StatusOK {
			t.Fatalf("%d %v", status, out)
		}
		choice := out["choices"].([]any)[0].(map[string]any)
		calls, _ := choice["message"].(map[string]any)["tool_calls"].([]any)
		if choice["finish_reason"] != "tool_calls" || len(calls) != 1 {
			t.Fatalf("%v", out)
		}
		if fn := calls[0].(map[string]any)["function"].(map[string]any); fn["name"] != "read_file" || !strings.Contains(fn["arguments"].(string), "notes.txt") {
			t.Errorf("call %v", fn)
		}
	})

	t.Run("ptool", func(t *testing.T) {
		code, out, errOut := runPTK(t, "", "ptool", "call", "rate", "--ptools", "testdata/ptools.json", "--input", `{"text": "I love it"}`,
			"--models", cat, "--model", "browser:testchat", "--mode", "protocol")
		if code != 0 || !strings.Contains(out, `"stars": 5`) || !strings.Contains(errOut, "protocol mode") {
			t.Errorf("exit %d, out %q, err %s", code, out, errOut)
		}
	})

	t.Run("chat", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the binary")
		}
		if _, err := exec.LookPath("tmux"); err != nil {
			t.Skip("tmux is not installed (CI installs it)")
		}
		bin := filepath.Join(t.TempDir(), "ptk")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		term := &tmuxTerm{t: t, socket: fmt.Sprintf("ptk-browser-chat-%d", os.Getpid())}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the last screen:\n%s", term.screen())
			}
			term.tmux("kill-server")
		})
		shellCmd := fmt.Sprintf("env XDG_CONFIG_HOME=%s %s chat --models %s --model browser:testchat --workspace %s; echo ptk exited $?; sleep 60",
			t.TempDir(), bin, cat, ws)
		if out, err := term.tmux("new-session", "-d", "-s", "chat", "-x", "100", "-y", "30", "-c", ws, shellCmd); err != nil {
			t.Fatalf("tmux new-session: %v %s", err, out)
		}
		term.waitFor("the chat", "/help")
		term.keys("What is the code word in notes.txt?", "Enter")
		screen := term.waitFor("the answer", "notes.txt", "The note says the code word is PERSIMMON.")
		if os.Getenv("PTK_ARTIFACTS") != "" {
			os.WriteFile(filepath.Join(os.Getenv("PTK_ARTIFACTS"), "browser-chat.txt"), []byte(screen), 0o644)
		}
		term.keys("C-c")
		term.waitFor("the quit warning", "ctrl+c again quits")
		term.keys("C-c")
		term.waitFor("ptk to exit", "ptk exited 0")
	})
}

// TestSiteFolder: a site file in the sites folder of ptk's config folder is
// a browser model of its own, and a copy of a built-in site there replaces
// it; a broken one is an error when it is used, not when models are listed.
func TestSiteFolder(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	sites := filepath.Join(config, "ptk", "sites")
	os.MkdirAll(sites, 0o755)
	os.WriteFile(filepath.Join(sites, "mine.json"), []byte(`{"name": "mine", "url": "https://chat.example.com/", "selectors": {"input": "textarea", "answer": ".a"}}`), 0o644)
	os.WriteFile(filepath.Join(sites, "chatgpt.json"), []byte(`{"name": "chatgpt", "url": "https://chatgpt.com/", "selectors": {"input": "#fixed", "answer": ".fixed"}}`), 0o644)
	os.WriteFile(filepath.Join(sites, "broken.json"), []byte(`{"name": "broken"`), 0o644)
	code, out, errOut := runPTK(t, "", "models")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"browser:mine", "browser:broken", filepath.Join(sites, "chatgpt.json")} {
		if !strings.Contains(out, want) {
			t.Errorf("ptk models lacks %s:\n%s", want, out)
		}
	}
	t.Setenv("PTK_BROWSER", "http://127.0.0.1:1")
	code, _, errOut = runPTK(t, "", "run", "--model", "browser:broken", "hi")
	if code != 2 || !strings.Contains(errOut, "broken.json") {
		t.Errorf("a broken site file: exit %d, %s", code, errOut)
	}
	code, _, errOut = runPTK(t, "", "run", "--model", "browser:mine", "hi")
	if code != 2 || !strings.Contains(errOut, "mine: no browser to drive: nothing answers at http://127.0.0.1:1") || strings.Contains(errOut, "--base-url") {
		t.Errorf("no browser: exit %d, %s", code, errOut)
	}
}
