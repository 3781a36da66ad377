//go:build !unix

package protocol

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
