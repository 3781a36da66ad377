// Command ptk-temporal-dev is a Temporal server for development and tests:
// Temporal's own server (go.temporal.io/server's temporaltest, in memory,
// nothing kept when it stops) with the namespace "default", listening on
// 127.0.0.1 at --listen (default 127.0.0.1:7233, Temporal's usual
// address). It prints the address on its first line of standard output
// once it takes connections, and runs until it is interrupted or its
// standard input closes (--stdin), so that a test that starts it never
// leaves it behind.
//
// It is a module of its own: the server pins an older go.temporal.io/api
// than the SDK ptk's temporal package uses, and no user of that package
// should build a server.
//
//	go run github.com/ptkit/ptk/temporal/devserver@latest
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/protobuf/types/known/durationpb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:7233", "the address to take connections at (port 0: any free port)")
	namespace := flag.String("namespace", "default", "the namespace to create")
	stdin := flag.Bool("stdin", false, "stop when standard input closes (for a test that starts the server)")
	flag.Parse()
	if err := run(*listen, *namespace, *stdin); err != nil {
		fmt.Fprintln(os.Stderr, "ptk-temporal-dev:", err)
		os.Exit(1)
	}
}

func run(listen, namespace string, stdin bool) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	ts := temporaltest.NewServer()
	defer ts.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := ts.GetDefaultClient()
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("creating the namespace %s: %w", namespace, err)
	}
	// The namespace is usable once the frontend's cache has it.
	for {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("the namespace %s: %w", namespace, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The server listens on a port it chose; this address forwards to it.
	backend := ts.GetFrontendHostPort()
	var wg sync.WaitGroup
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { forward(conn, backend) })
		}
	}()
	fmt.Println(ln.Addr().String())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	if stdin {
		go func() {
			io.Copy(io.Discard, os.Stdin)
			stop <- syscall.SIGTERM
		}()
	}
	<-stop
	return nil
}

// forward copies bytes both ways between conn and the server at backend.
func forward(conn net.Conn, backend string) {
	defer conn.Close()
	up, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(up, conn)
	go cp(conn, up)
	<-done
	<-done
}
