//go:build !unix

package gateway_test

import (
	"sync/atomic"
	"time"
)

// benchProcessCPU reports nothing where there is no getrusage.
func benchProcessCPU() (time.Duration, bool) { return 0, false }

// benchGatewayPID is the gateway's process when it runs in one of its own
// (PTK_BENCH_GATEWAY=process); its CPU is not counted here.
var benchGatewayPID atomic.Int64
