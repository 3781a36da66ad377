package main

import (
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// exposureFlags are the flags of the commands that listen for HTTP
// (serve, dashboard, mcp --addr): which names clients may use besides the
// listen address, and whether to serve other machines without keys.
type exposureFlags struct {
	allowedHosts    string
	unauthenticated bool
}

// addExposureFlags adds --allowed-hosts and, for a server that takes
// keys, --unauthenticated.
func addExposureFlags(fl *pflag.FlagSet, f *exposureFlags, keys bool) {
	fl.StringVar(&f.allowedHosts, "allowed-hosts", "", "names clients may reach the server by besides its address and localhost, comma-separated: a reverse proxy's (env PTK_ALLOWED_HOSTS; * allows any, giving up the check against DNS rebinding)")
	if keys {
		fl.BoolVar(&f.unauthenticated, "unauthenticated", false, "serve a non-loopback --addr without client keys: anyone who reaches it may use it")
	}
}

// hosts is --allowed-hosts, else $PTK_ALLOWED_HOSTS.
func (f exposureFlags) hosts(cmd *cobra.Command) []string {
	return splitList(setting(cmd, "allowed-hosts", f.allowedHosts, "", "PTK_ALLOWED_HOSTS"))
}

// check refuses a listener that other machines can reach when no client
// key is set, unless --unauthenticated says so: a server of ptk's on the
// network without keys lets anyone use the model, its keys and its tools.
func (f exposureFlags) check(ln net.Listener, keys int, what string) error {
	if keys > 0 || f.unauthenticated {
		return nil
	}
	if lo, err := isLoopback(ln.Addr()); err == nil && lo {
		return nil
	}
	return usagef("--addr %s can be reached from other machines, and no client keys are set: anyone who reaches it could use %s. "+
		"Set keys with --api-keys FILE or PTK_API_KEYS, listen on 127.0.0.1, or pass --unauthenticated to serve without keys anyway", ln.Addr(), what)
}
