package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/dashboard"
	"github.com/ptkit/ptk/trace"
)

func newDashboardCmd() *cobra.Command {
	var addr, db, token string
	var noLabels bool
	var exposure exposureFlags
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a live web dashboard of the recorded runs",
		Long: `dashboard serves a web page of the trace store: the runs, newest first,
filtered by kind, status, model, name, text and time; each run's timeline of
model calls and tool calls; analytics per tool, model and ptool. Runs that
other processes record (ptk run, ptk serve) appear within two seconds,
without a reload. The page is part of the binary; it reads the store and
never changes it.

On a loopback address (the default) anyone on this machine may look. On any
other address a token is required: --token or PTK_DASHBOARD_TOKEN, or one
made up and printed; open the printed address, which carries it. A request
whose Host is not the listen address, localhost or one of --allowed-hosts is
refused, so that a web page made to resolve to this machine (DNS rebinding)
reads nothing.

  ptk dashboard
  ptk dashboard --trace-db postgres://ptk@db/traces --addr 0.0.0.0:7070`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := readTraceStore(cmd, db)
			if err != nil {
				return err
			}
			defer s.Close()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usagef("--addr %s: %v", addr, err)
			}
			token = setting(cmd, "token", token, "", "PTK_DASHBOARD_TOKEN")
			if lo, err := isLoopback(ln.Addr()); err == nil && !lo && token == "" {
				var b [16]byte
				rand.Read(b[:])
				token = hex.EncodeToString(b[:])
			}
			var labels *trace.Store
			if !noLabels {
				// The page's one write: labels, into the store opened for
				// writing; a store that cannot be written is shown without.
				db, _ := traceDB(cmd, db)
				if ls, err := trace.Open(cmd.Context(), db); err == nil {
					labels = ls
					defer ls.Close()
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "ptk dashboard: no labels (the store cannot be written): %v\n", err)
				}
			}
			h := dashboard.New(s, dashboard.Options{Token: token, AllowedHosts: exposure.hosts(cmd), Labels: labels})
			defer h.Close()
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			url := "http://" + ln.Addr().String() + "/"
			if token != "" {
				url += "?token=" + token
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "ptk dashboard of %s at %s\n", s.Name(), url)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				<-ctx.Done()
				h.Close()
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				srv.Shutdown(sctx)
			}()
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&addr, "addr", "127.0.0.1:7070", "address to listen on, HOST:PORT")
	fl.StringVar(&db, "trace-db", "", "the trace store: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	fl.StringVar(&token, "token", "", "the token the page must carry (env PTK_DASHBOARD_TOKEN; made up on a non-loopback address)")
	fl.BoolVar(&noLabels, "no-labels", false, "never write to the store: the page cannot label runs")
	addExposureFlags(fl, &exposure, false)
	return cmd
}

// isLoopback reports whether a listener's address is a loopback one.
func isLoopback(a net.Addr) (bool, error) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return false, errors.New("not TCP")
	}
	return ta.IP.IsLoopback(), nil
}
