package shell_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/ptkit/ptk/tools/shell"
)

func Example() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	sh, err := shell.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	bash := sh.Tool()
	for _, args := range []string{
		`{"command": "echo hello"}`,
		`{"command": "echo to stderr >&2; exit 3"}`,
	} {
		res, err := bash.Run(context.Background(), json.RawMessage(args))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (error: %v)\n%s\n\n", args, res.IsError, res.Content)
	}
	// Output:
	// {"command": "echo hello"} (error: false)
	// hello
	// exit code 0
	//
	// {"command": "echo to stderr >&2; exit 3"} (error: false)
	// to stderr
	// exit code 3
}
