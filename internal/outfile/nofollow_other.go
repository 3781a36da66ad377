//go:build !unix

package outfile

const oNoFollow = 0

func isLoop(error) bool { return false }
