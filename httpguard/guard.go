// Package httpguard keeps web pages from using a server that listens on
// the user's machine: ptk serve, ptk dashboard and ptk mcp --addr. Any page
// the user opens can send requests to 127.0.0.1; these checks make sure
// that only the user's own clients are answered:
//
//   - Hosts: a request's Host must name the server: the address the
//     connection came in on, localhost on a loopback address, or a name
//     the operator listed. A DNS-rebinding page (attacker.example, made to
//     resolve to 127.0.0.1) sends its own name and is refused.
//   - JSON: a request with a body must say Content-Type: application/json.
//     A page may send text/plain, a form or an untyped blob to any address
//     without asking (a CORS "simple request"), but not JSON.
//   - Origins: a request that comes with an Origin (browsers add it to
//     every POST and to WebSocket handshakes) must come from the server's
//     own origin or one the operator listed.
//
// Guard applies all three; each is also middleware of its own. Programs
// and SDKs send no Origin, send their own Host and send JSON, so they pass.
package httpguard

import (
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Options configure Guard.
type Options struct {
	// Hosts are names (or addresses) by which clients may reach the server
	// besides the address they connect to and, on a loopback address,
	// localhost: a reverse proxy's name, a container's published address.
	// "*" allows any Host, which gives up the defence against DNS
	// rebinding.
	Hosts []string
	// Origins are the origins of pages (scheme://host[:port]) that may
	// call the server besides its own.
	Origins []string
}

// Guard returns middleware that applies Hosts, JSON and Origins.
func Guard(opts Options) func(http.Handler) http.Handler {
	hosts, typed, origins := Hosts(opts.Hosts...), JSON(), Origins(opts.Origins...)
	return func(next http.Handler) http.Handler { return hosts(origins(typed(next))) }
}

// Hosts returns middleware that answers 403 to a request whose Host does
// not name the server: it must be the address the connection came in on
// (as an IP address, any port), localhost or a name under .localhost when
// that address is a loopback one, or one of names (compared without case
// and port; "*" allows all).
func Hosts(names ...string) func(http.Handler) http.Handler {
	allowed := map[string]bool{}
	all := false
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if h, _, err := net.SplitHostPort(n); err == nil {
			n = h
		}
		n = strings.TrimSuffix(strings.TrimPrefix(n, "["), "]")
		if n == "*" {
			all = true
		}
		if n != "" {
			allowed[n] = true
		}
	}
	return func(next http.Handler) http.Handler {
		if all {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !hostAllowed(r, allowed) {
				refuse(w, http.StatusForbidden, "host_not_allowed", "the Host "+quote(r.Host)+" does not name this server, so the request may come from a web page that another name was pointed at (DNS rebinding) and is refused; "+
					"connect to the server's own address or localhost, or list the name with --allowed-hosts")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// hostAllowed reports whether r's Host names the server.
func hostAllowed(r *http.Request, allowed map[string]bool) bool {
	host := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	if allowed[host] {
		return true
	}
	local := localAddr(r)
	if ip, err := netip.ParseAddr(host); err == nil {
		return local.IsValid() && ip.Unmap() == local.Unmap()
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		// Browsers resolve these names to loopback themselves, never
		// through DNS: no page can rebind them.
		return local.IsValid() && local.Unmap().IsLoopback()
	}
	return false
}

// localAddr is the address the request's connection came in on, when the
// server says.
func localAddr(r *http.Request) netip.Addr {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if a == nil {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().WithZone("")
}

// JSON returns middleware that answers 415 to a POST, PUT or PATCH whose
// Content-Type is not application/json (or another JSON type, such as
// application/merge-patch+json): text/plain, forms and bodies without a
// type are what a web page may send anywhere without the server's leave.
func JSON() func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Method {
			case http.MethodPost, http.MethodPut, http.MethodPatch:
				mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
				if err != nil || mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
					got := r.Header.Get("Content-Type")
					if got == "" {
						got = "none"
					}
					refuse(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as JSON with \"Content-Type: application/json\" (this request's Content-Type: "+got+
						"); other types are refused because any web page can send them to this server unasked")
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Origins returns middleware that answers 403 to a request with an Origin
// header (browsers send one with every POST and WebSocket handshake) that
// is neither the server's own origin (that of the request's Host) nor one
// of origins.
func Origins(origins ...string) func(http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, o := range origins {
		if k, ok := originKey(o); ok {
			allowed[k] = true
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o := r.Header.Get("Origin")
			if o == "" {
				next.ServeHTTP(w, r)
				return
			}
			k, ok := originKey(o)
			if !ok || !(allowed[k] || sameOrigin(k, r)) {
				refuse(w, http.StatusForbidden, "origin_not_allowed", "a web page of another origin ("+quote(o)+") may not call this server")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// originKey is an origin as host:port (the default port of its scheme
// written out), or false for one that is no http(s) origin ("null").
func originKey(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port)), true
}

// sameOrigin reports whether the origin key k is r's Host (a Host without
// a port matches either default port).
func sameOrigin(k string, r *http.Request) bool {
	host, port, err := net.SplitHostPort(strings.ToLower(r.Host))
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(r.Host), "["), "]")
		return k == net.JoinHostPort(host, "80") || k == net.JoinHostPort(host, "443")
	}
	return k == net.JoinHostPort(host, port)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// refuse answers with an error in the shape OpenAI-compatible clients
// read (and people can).
func refuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	e.Error.Message, e.Error.Type, e.Error.Code = msg, "invalid_request_error", code
	json.NewEncoder(w).Encode(e)
}
