package fs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ptkit/ptk/tools/fs"
)

func Example() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, content := range map[string]string{
		"go.mod":          "module example.com/hello\n\ngo 1.26\n",
		"main.go":         "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greeting())\n}\n",
		"greet.go":        "package main\n\nfunc greeting() string { return \"hello\" }\n",
		".gitignore":      "/bin\n",
		"bin/hello":       "\x7fELF\x00",
		"internal/x/x.go": "package x\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}

	ws, err := fs.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	for _, call := range []struct{ tool, args string }{
		{"list_dir", `{}`},
		{"glob", `{"pattern": "**/*.go"}`},
		{"grep", `{"pattern": "func \\w+\\(", "include": "*.go"}`},
		{"read_file", `{"path": "main.go", "offset": 5, "limit": 2}`},
		{"read_file", `{"path": "../etc/passwd"}`},
	} {
		tool, _ := ws.Tool(call.tool)
		res, err := tool.Run(context.Background(), json.RawMessage(call.args))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %s (error: %v)\n%s\n\n", call.tool, call.args, res.IsError, res.Content)
	}
	// Output:
	// list_dir {} (error: false)
	// .gitignore
	// go.mod
	// greet.go
	// internal/
	// main.go
	// (1 entry hidden by ignore rules)
	//
	// glob {"pattern": "**/*.go"} (error: false)
	// greet.go
	// internal/x/x.go
	// main.go
	//
	// grep {"pattern": "func \\w+\\(", "include": "*.go"} (error: false)
	// greet.go:3: func greeting() string { return "hello" }
	// main.go:5: func main() {
	//
	// read_file {"path": "main.go", "offset": 5, "limit": 2} (error: false)
	//      5	func main() {
	//      6		fmt.Println(greeting())
	// (showing lines 5-6 of 7; use offset=7 to read on)
	//
	// read_file {"path": "../etc/passwd"} (error: true)
	// path escapes the workspace: ../etc/passwd
}

func ExampleWorkspace_EditTools() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws, err := fs.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	for _, call := range []struct{ tool, args string }{
		{"write_file", `{"path": "cmd/hello/main.go", "content": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"world\"\n\tgreeting := \"hello\"\n\tfmt.Println(greeting)\n}\n"}`},
		{"edit_file", `{"path": "cmd/hello/main.go", "old_string": "fmt.Println(greeting)", "new_string": "fmt.Println(greeting + \", \" + name)"}`},
		{"edit_file", `{"path": "cmd/hello/main.go", "old_string": "func main() {\n    name", "new_string": "x"}`},
		{"write_file", `{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}`},
	} {
		tool, _ := ws.Tool(call.tool)
		res, err := tool.Run(context.Background(), json.RawMessage(call.args))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (error: %v)\n%s\n\n", call.tool, res.IsError, res.Content)
	}
	// Output:
	// write_file (error: false)
	// Created cmd/hello/main.go (9 lines, 105 bytes)
	//
	// edit_file (error: false)
	// Edited cmd/hello/main.go: 1 replacement
	// --- a/cmd/hello/main.go
	// +++ b/cmd/hello/main.go
	// @@ -5,5 +5,5 @@
	//  func main() {
	//  	name := "world"
	//  	greeting := "hello"
	// -	fmt.Println(greeting)
	// +	fmt.Println(greeting + ", " + name)
	//  }
	//
	// edit_file (error: true)
	// old_string was not found in cmd/hello/main.go; a match ignoring indentation is at lines 5-6; old_string must match exactly, including whitespace
	//
	// write_file (error: true)
	// refusing to write .git/hooks/pre-commit: it is inside a .git directory, where hooks and config run code outside any control; use git to change the repository
}
