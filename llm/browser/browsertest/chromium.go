package browsertest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

var lookPath = exec.LookPath

// Chromium is a headless Chromium started for a test, with a remote
// debugging port.
type Chromium struct {
	// URL is its debugging address, http://127.0.0.1:PORT.
	URL string
	// Dir is its profile directory.
	Dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartChromium starts exe, headless, with the profile directory dir and
// a debugging port the system picks.
func StartChromium(exe, dir string) (*Chromium, error) {
	args := append([]string{"--user-data-dir=" + dir, "--remote-debugging-port=0"}, Flags...)
	args = append(args, "about:blank")
	cmd := exec.Command(exe, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	c := &Chromium{Dir: dir, cmd: cmd, exited: exited}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			line, _, _ := strings.Cut(string(data), "\n")
			if port, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && port > 0 {
				c.URL = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
				if resp, err := http.Get(c.URL + "/json/version"); err == nil {
					resp.Body.Close()
					return c, nil
				}
			}
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited: %s", exe, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			killGroup(cmd)
			<-exited
			return nil, errors.New("chromium did not open its debugging port within 60s")
		}
	}
}

// Close stops the browser and every process it started.
func (c *Chromium) Close() {
	killGroup(c.cmd)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
	}
	KillProfile(c.Dir)
}
