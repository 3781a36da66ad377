package httpguard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ptkit/ptk/httpguard"
)

// A server on the user's machine answers its clients and refuses what a
// web page sends it.
func Example() {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	srv := httptest.NewServer(httpguard.Guard(httpguard.Options{Hosts: []string{"ptk.internal"}})(api))
	defer srv.Close()

	post := func(contentType, origin string) int {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"model": "m"}`))
		req.Header.Set("Content-Type", contentType)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println("an SDK:", post("application/json", ""))
	fmt.Println("a page's text/plain:", post("text/plain", "https://attacker.example"))
	fmt.Println("a page's JSON:", post("application/json", "https://attacker.example"))
	// Output:
	// an SDK: 200
	// a page's text/plain: 403
	// a page's JSON: 403
}
