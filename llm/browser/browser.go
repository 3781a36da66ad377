package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Browser is where the chat pages open: a browser that runs already with a
// remote debugging port ([Attach]), or one that ptk starts with a profile
// directory and leaves running ([Launch]). Either way it is the user's own
// browser, signed in to the sites by the user: ptk never handles a
// password or a cookie. A Browser is safe for concurrent use; each call of
// a model opens a tab of its own in it.
type Browser struct {
	attach string
	launch LaunchOptions
	mu     sync.Mutex // one start at a time
}

// LaunchOptions say how to start a browser.
type LaunchOptions struct {
	// ProfileDir is the browser's profile (user data) directory: where its
	// sign-ins are kept. Required. Chrome refuses a debugging port on its
	// default profile, so give it a directory of its own (see docs/browser.md).
	ProfileDir string
	// Exec is the browser's executable; empty: the first of chromium,
	// chromium-browser, google-chrome, google-chrome-stable, chrome,
	// microsoft-edge and brave-browser on the PATH, or Chrome's place on
	// macOS.
	Exec string
	// Headless starts the browser without a window. A visible window (the
	// default) lets the user sign in and watch.
	Headless bool
	// Flags are more command-line flags ("--no-sandbox" to run as root).
	Flags []string
	// StartTimeout bounds the start: 30 seconds unless set.
	StartTimeout time.Duration
}

// Attach returns the browser that answers at addr, its remote debugging
// address: "http://127.0.0.1:9222" for a browser started with
// --remote-debugging-port=9222, or its "ws://…/devtools/browser/…" address.
func Attach(addr string) (*Browser, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("browser address: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss":
		return nil, fmt.Errorf("browser address %q: want http://HOST:PORT or ws://HOST:PORT/devtools/browser/ID", addr)
	case u.Host == "":
		return nil, fmt.Errorf("browser address %q has no host", addr)
	}
	return &Browser{attach: strings.TrimRight(addr, "/")}, nil
}

// Launch returns a browser that is started with the profile directory
// o.ProfileDir and a debugging port the first time a model needs it, unless
// one runs with that profile already (its DevToolsActivePort file says
// where). It is left running when the program ends, signed in, for the next
// run; close it as any browser window.
func Launch(o LaunchOptions) (*Browser, error) {
	if o.ProfileDir == "" {
		return nil, errors.New("browser: a profile directory is required to start a browser")
	}
	dir, err := filepath.Abs(o.ProfileDir)
	if err != nil {
		return nil, err
	}
	o.ProfileDir = dir
	o.Flags = append([]string(nil), o.Flags...)
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	return &Browser{launch: o}, nil
}

// String says which browser b is.
func (b *Browser) String() string {
	if b.attach != "" {
		return "the browser at " + b.attach
	}
	return "the browser with the profile " + b.launch.ProfileDir
}

// endpoint returns the debugging address of the browser, starting it
// first when b launches one and none runs.
func (b *Browser) endpoint(ctx context.Context) (string, error) {
	if b.attach != "" {
		return b.attach, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	portFile := filepath.Join(b.launch.ProfileDir, "DevToolsActivePort")
	if addr, ok := running(ctx, portFile); ok {
		return addr, nil
	}
	return b.start(ctx, portFile)
}

// start starts the browser, detached from this process so that it outlives
// it, and waits until its debugging port answers.
func (b *Browser) start(ctx context.Context, portFile string) (string, error) {
	o := b.launch
	exe := o.Exec
	if exe == "" {
		exe = findBrowser()
		if exe == "" {
			return "", errors.New("no Chrome or Chromium found on the PATH: name one (PTK_BROWSER)")
		}
	}
	if err := os.MkdirAll(o.ProfileDir, 0o700); err != nil {
		return "", err
	}
	args := []string{"--user-data-dir=" + o.ProfileDir, "--remote-debugging-port=0", "--no-first-run", "--no-default-browser-check"}
	if o.Headless {
		args = append(args, "--headless")
	}
	args = append(args, o.Flags...)
	args = append(args, "about:blank")
	logFile, err := os.CreateTemp("", "ptk-browser-*.log")
	if err != nil {
		return "", err
	}
	defer os.Remove(logFile.Name()) // the browser keeps its open file
	defer logFile.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	deadline := time.NewTimer(o.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var gone <-chan time.Time // after the process exited: a short wait for a browser it handed over to
	for {
		if addr, ok := running(ctx, portFile); ok {
			return addr, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline.C:
			return "", fmt.Errorf("%s did not open its debugging port within %v; its output: %s", exe, o.StartTimeout, tail(logFile))
		case <-exited:
			exited, gone = nil, time.After(2*time.Second)
		case <-gone:
			return "", fmt.Errorf("%s exited at once: is the profile %s open in a browser started without --remote-debugging-port? "+
				"Close that browser, or start it with --remote-debugging-port=9222 and attach to it; its output: %s", exe, o.ProfileDir, tail(logFile))
		case <-tick.C:
		}
	}
}

// running returns the address of the browser that the profile's
// DevToolsActivePort file names, when one answers there.
func running(ctx context.Context, portFile string) (string, bool) {
	data, err := os.ReadFile(portFile)
	if err != nil {
		return "", false
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	port, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || port <= 0 || port > 65535 {
		return "", false
	}
	addr := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	return addr, probe(ctx, addr) == nil
}

// probe asks the browser at addr for its version: an answer says a
// browser listens there.
func probe(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr+"/json/version", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s/json/version: %s", addr, resp.Status)
	}
	return nil
}

// tail is the end of the browser's output, for an error message.
func tail(f *os.File) string {
	const n = 2000
	data, _ := os.ReadFile(f.Name())
	if len(data) > n {
		data = data[len(data)-n:]
	}
	s := strings.TrimSpace(string(bytes.ToValidUTF8(data, []byte("?"))))
	if s == "" {
		return "(none)"
	}
	return s
}

// findBrowser looks for a Chrome or Chromium.
func findBrowser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "microsoft-edge", "brave-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if runtime.GOOS == "darwin" {
		for _, p := range []string{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium"} {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}
