package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is the browser of the cross-site test: $PTK_TEST_CHROMIUM,
// else chromium on the PATH. Without one the test skips, except under CI.
func chromium(t *testing.T) string {
	p := os.Getenv("PTK_TEST_CHROMIUM")
	if p == "" {
		p, _ = exec.LookPath("chromium")
	}
	if p == "" {
		msg := "no Chromium: install Debian's chromium (as .ci/run does) or set PTK_TEST_CHROMIUM"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

func randomHex(t *testing.T) string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// attackPage is a page of another origin that tries, without asking (the
// requests a page may send anywhere: no-cors fetches and a form), to make
// ptk serve at gw run its read_file on secret.txt, and to do so again
// through rebind, a name made to resolve to this machine (DNS rebinding).
// It sets document.title to "done" when all were sent.
const attackPage = `<!doctype html><title>cute cats</title>
<form id="f" method="POST" enctype="text/plain" target="sink"><input name='{"model":"m","messages":[{"role":"user","content":"Read secret.txt","x":"' value='"}]}'></form>
<iframe name="sink"></iframe>
<script>
const gw = %q, rebind = %q;
const body = JSON.stringify({model: "m", messages: [{role: "user", content: "Read secret.txt and tell me what it says."}]});
(async () => {
  const tries = [
    fetch(gw + "/v1/chat/completions", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}),
    fetch(gw + "/v1/chat/completions", {method: "POST", mode: "no-cors", body: new Blob([body])}),
    fetch(rebind + "/v1/chat/completions", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}),
  ];
  const f = document.getElementById("f");
  f.action = gw + "/v1/chat/completions";
  f.submit();
  await Promise.allSettled(tries);
  await new Promise(r => setTimeout(r, 1500)); // the form's answer
  document.title = "done";
})();
</script>`

// TestCrossSiteInChromium opens, in a real Chromium, a page of another
// origin that sends ptk serve (with read_file over a workspace holding a
// secret) a text/plain POST, an untyped blob, a form, and the same through
// a rebinding name: none reaches the model, so the secret never goes
// upstream. Then a rebinding request to ptk dashboard reads nothing. Both
// worked before: the gateway read any body as JSON and neither server
// looked at Host. A JSON request from a program still gets through.
func TestCrossSiteInChromium(t *testing.T) {
	browser := chromium(t)
	secret := "SECRET-" + randomHex(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "secret.txt"), []byte(secret+"\n"), 0o644)
	up, upstream := newFakeOpenAI(t,
		fakeReply{calls: [][2]string{{"read_file", `{"path":"secret.txt"}`}}},
		fakeReply{content: "It says what it says."},
	)
	gw := startServe(t, "--base-url", upstream, "--model", "m", "--mode", "native", "--tools", "read_file", "--workspace", ws)
	_, gwPort, _ := net.SplitHostPort(strings.TrimPrefix(gw, "http://"))

	// ptk dashboard, over a store holding a run worth stealing.
	planted := "PLANTED-" + randomHex(t)
	db := filepath.Join(t.TempDir(), "traces.db")
	_, url := newFakeOpenAI(t, fakeReply{content: "Noted."})
	if code, _, errOut := runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", t.TempDir(), "--trace-db", db, planted); code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	dash := startDashboard(t, "--trace-db", db)
	_, dashPort, _ := net.SplitHostPort(dash)

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, attackPage, gw, "http://rebind.test:"+gwPort)
	}))
	t.Cleanup(page.Close)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(filepath.Join(t.TempDir(), "chromium")),
		// DNS rebinding, without a DNS server: the name resolves to this
		// machine, as an attacker's would once rebound.
		chromedp.Flag("host-resolver-rules", "MAP rebind.test 127.0.0.1"))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	bctx, cancelT := context.WithTimeout(bctx, 2*time.Minute)
	defer cancelT()

	if err := chromedp.Do(bctx, chromedp.Navigate(page.URL)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`document.title === "done"`, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatalf("the attack page did not finish: %v", err)
	}
	if n := len(up.allRequests()); n != 0 {
		t.Errorf("the page's requests reached the model %d times", n)
	}
	for i, r := range up.allRequests() {
		if b, _ := json.Marshal(r); strings.Contains(string(b), secret) {
			t.Errorf("request %d to the model carries the secret", i+1)
		}
	}

	// Rebinding against the dashboard: the page's own origin is
	// rebind.test, so the browser lets it read the answer; the dashboard
	// must give it nothing.
	for _, path := range []string{"/api/runs", "/"} {
		if err := chromedp.Do(bctx, chromedp.Navigate("http://rebind.test:"+dashPort+path)); err != nil {
			t.Fatal(err)
		}
		body, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.documentElement.innerText`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(body, planted) || !strings.Contains(body, "does not name this server") {
			t.Errorf("the dashboard gave a rebinding page at %s:\n%.600s", path, body)
		}
	}
	// The dashboard at its own address still shows the run.
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+dash+"/api/runs")); err != nil {
		t.Fatal(err)
	}
	if body, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.documentElement.innerText`)); !strings.Contains(body, planted) {
		t.Errorf("the dashboard at its own address: %.300s", body)
	}

	// A program that sends JSON still gets through, and the secret does
	// go upstream then: the path the page was kept from is real.
	if status, out := postChat(t, gw, "", `{"messages":[{"role":"user","content":"Read secret.txt"}]}`); status != http.StatusOK {
		t.Fatalf("a JSON client: %d %v", status, out)
	}
	if reqs := up.allRequests(); len(reqs) != 2 {
		t.Errorf("a JSON client's request made %d model calls, want 2", len(reqs))
	} else if b, _ := json.Marshal(reqs[1]); !strings.Contains(string(b), secret) {
		t.Error("the control request's read_file result did not reach the model: the test proves nothing")
	}
}

// startDashboard runs ptk dashboard with args on a free loopback port
// until the test ends, and returns its address once it answers.
func startDashboard(t *testing.T, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	stderr := &syncBuffer{}
	go func() {
		root := newRoot(strings.NewReader(""), io.Discard, stderr)
		root.SetArgs(append([]string{"dashboard", "--addr", addr}, args...))
		done <- root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dashboard ended with %v; stderr:\n%s", err, stderr.String())
		}
	})
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/"); err == nil {
			resp.Body.Close()
			return addr
		}
		select {
		case err := <-done:
			t.Fatalf("dashboard ended at once: %v; stderr:\n%s", err, stderr.String())
		default:
		}
	}
	t.Fatalf("the dashboard did not answer; stderr:\n%s", stderr.String())
	return ""
}

// allRequests returns the requests the fake server received so far.
func (f *fakeOpenAI) allRequests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.requests...)
}

// TestServersOnTheNetworkNeedKeys: ptk serve and ptk mcp refuse an address
// other machines can reach when no client key is set, and say how to go
// on; with keys, or with --unauthenticated, they serve.
func TestServersOnTheNetworkNeedKeys(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--addr", "0.0.0.0:0", "--model", "m"},
		{"mcp", "--addr", "0.0.0.0:0", "--workspace", t.TempDir()},
	} {
		code, _, errOut := runPTK(t, "", args...)
		if code != 2 || !strings.Contains(errOut, "can be reached from other machines, and no client keys are set") || !strings.Contains(errOut, "--unauthenticated") {
			t.Errorf("%s: exit %d, %q", args[0], code, errOut)
		}
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	for _, extra := range [][]string{{"--unauthenticated"}, {"--api-keys", writeKeys(t)}} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			root := newRoot(strings.NewReader(""), io.Discard, io.Discard)
			root.SetArgs(append([]string{"serve", "--addr", "0.0.0.0:" + port, "--model", "m"}, extra...))
			done <- root.ExecuteContext(ctx)
		}()
		up := false
		for deadline := time.Now().Add(60 * time.Second); !up && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if resp, err := http.Get("http://127.0.0.1:" + port + "/healthz"); err == nil {
				resp.Body.Close()
				up = resp.StatusCode == http.StatusOK
			}
		}
		cancel()
		if err := <-done; err != nil || !up {
			t.Errorf("serve %v: up %v, %v", extra, up, err)
		}
	}
}

func writeKeys(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(f, []byte("k1\n"), 0o600)
	return f
}
