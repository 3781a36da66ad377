package main

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/eval"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/trace"
)

// Shell completion ('ptk completion bash|zsh|fish|powershell') completes
// commands and flags, and these values: --model from the catalog (and the
// user's models.json, $PTK_MODELS, --models), --mode, --tools, eval's
// --categories and --prompt, traces' --kind and --status, conversation
// names from the trace store, and ptool names from the ptools file. The
// functions are given to every command that has the flag, found by
// walking the tree, so a command added later completes them too.

// addCompletions registers the value completions on every command under
// root that has the flags or arguments they complete.
func addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		own := c.NonInheritedFlags()
		register := func(flag string, f cobra.CompletionFunc) {
			if own.Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, f)
			}
		}
		register("model", completeModels)
		register("mode", completeModes(c))
		register("tools", completeTools(c))
		register("categories", completeList(slices.Concat(eval.CategoryGroups(), eval.Categories)))
		if c.CommandPath() == "ptk eval" {
			register("prompt", completeList(slices.Sorted(maps.Keys(eval.Prompts))))
		}
		register("kind", completeOne([]string{string(trace.KindAgent), string(trace.KindPtool), string(trace.KindWorkflow), string(trace.KindReAct), string(trace.KindDistill), string(trace.KindRequest)}))
		register("status", completeOne([]string{"ok", "error"}))
		register("conversation", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return completeOneOf(conversationNames(cmd), toComplete), cobra.ShellCompDirectiveNoFileComp
		})
		switch c.CommandPath() {
		case "ptk conversations show", "ptk conversations rm":
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return completeOneOf(conversationNames(cmd), toComplete), cobra.ShellCompDirectiveNoFileComp
			}
		case "ptk ptool call", "ptk distill":
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return completeOneOf(ptoolNames(cmd), toComplete), cobra.ShellCompDirectiveNoFileComp
			}
		case "ptk run", "ptk react", "ptk workflow plan":
			// a prompt or a goal, not a file
			c.ValidArgsFunction = cobra.NoFileCompletions
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeModels completes --model with the catalog's names, each item of
// a comma-separated fallback list.
func completeModels(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	file := ""
	if f := cmd.Flag("models"); f != nil {
		file = f.Value.String()
	}
	c, err := loadCatalog(file)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeListOf(c.Names(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeModes completes --mode with the modes c takes.
func completeModes(c *cobra.Command) cobra.CompletionFunc {
	switch c.CommandPath() {
	case "ptk ptool call":
		return completeOne([]string{string(ptool.ModeAuto), string(ptool.ModeStructured), string(ptool.ModeProtocol)})
	case "ptk eval":
		return completeList([]string{string(eval.ModePTK), string(eval.ModeNative), string(eval.ModeAuto)})
	}
	return completeOne([]string{string(agent.ModePTK), string(agent.ModeNative), string(agent.ModeAuto)})
}

// completeTools completes --tools: the built-in tools' names, or, for the
// commands whose --tools is a file of tool definitions, JSON files.
func completeTools(c *cobra.Command) cobra.CompletionFunc {
	if c.Name() == "parse" || c.Name() == "prompt" {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
		}
	}
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return completeListOf(builtinToolNames(), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// builtinToolNames are the names of ptk's built-in tools, from the tools
// themselves (over a throwaway workspace).
func builtinToolNames() []string {
	dir, err := os.MkdirTemp("", "ptk-complete-")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(dir)
	_, tools, closeFn, err := builtinTools(dir, "", false, nil)
	if err != nil {
		return nil
	}
	defer closeFn()
	var names []string
	for _, t := range tools {
		names = append(names, t.Info().Name)
	}
	return names
}

// conversationNames lists the trace store's conversations, newest first.
// It opens only a store that is there already: completing never makes one.
func conversationNames(cmd *cobra.Command) []string {
	flag := ""
	if f := cmd.Flag("trace-db"); f != nil {
		flag = f.Value.String()
	}
	db, err := traceDB(cmd, flag)
	if err != nil {
		return nil
	}
	if !strings.Contains(db, "://") && !fileExists(db) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := trace.Open(ctx, db)
	if err != nil {
		return nil
	}
	defer s.Close()
	convs, err := s.Conversations(ctx)
	if err != nil {
		return nil
	}
	var names []string
	for _, c := range convs {
		names = append(names, c.ID)
	}
	return names
}

// ptoolNames lists the ptools the --ptools file declares.
func ptoolNames(cmd *cobra.Command) []string {
	file := "ptools.json"
	if f := cmd.Flag("ptools"); f != nil && f.Value.String() != "" {
		file = f.Value.String()
	}
	defs, err := ptool.ReadDefs(file)
	if err != nil {
		return nil
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	return names
}

// completeOne completes a flag that takes one of values.
func completeOne(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return completeOneOf(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeList completes a flag that takes a comma-separated list of values.
func completeList(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return completeListOf(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func completeOneOf(values []string, toComplete string) []string {
	var out []string
	for _, v := range values {
		if completable(v) && strings.HasPrefix(v, toComplete) {
			out = append(out, v)
		}
	}
	return out
}

// completeListOf completes the last item of a comma-separated list: the
// items before it stay, and a value already in the list is not offered
// again.
func completeListOf(values []string, toComplete string) []string {
	prefix, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	given := splitList(prefix)
	var out []string
	for _, v := range completeOneOf(values, last) {
		if !strings.Contains(v, ",") && !slices.Contains(given, v) {
			out = append(out, prefix+v)
		}
	}
	return out
}

// completable reports whether v can be offered to a shell: the
// completion protocol is a value a line, with a tab before its
// description, so a name read from a file (a conversation's, a catalog's,
// a ptool's) that holds a control character is left out rather than
// breaking the shell's reading of the others, or writing escape sequences
// to the terminal.
func completable(v string) bool {
	if v == "" {
		return false
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\uFFFD' {
			return false
		}
	}
	return true
}
