package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/distill"
)

func newRefactorCmd() *cobra.Command {
	var code string
	var stdout, keepCode bool
	cmd := &cobra.Command{
		Use:   "refactor",
		Short: "Rewrite a ptool into its distilled form, or a Go function into a ptool",
		Long: `'ptk refactor distill FILE NAME' rewrites the declaration of the ptool NAME in
the Go file FILE, ptool.New[In, Out]("NAME", ...), into
ptool.Distill(nameCode, ptool.New[In, Out]("NAME", ...)) and adds the code
'ptk distill' wrote (--code, default NAME_distilled.go) as the function
nameCode, with In and Out replaced by the declaration's types.

'ptk refactor expand FILE FUNC' does the reverse: it makes a ptool of the
function FUNC, func(context.Context, In) (Out, error), whose doc comment
becomes the ptool's doc: it adds NewFuncPtool(opts ...ptool.Option)
*ptool.PTool[In, Out], which the model answers, and leaves FUNC as it was.
With --keep-code FUNC stays in front as the code path, answering first,
and the model answers where FUNC returns ptool.ErrFallback:
NewFuncPtool returns a *ptool.Distilled[In, Out].

Both rewrite FILE in place (--stdout prints the result instead), keeping
its comments and formatting.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().BoolVar(&stdout, "stdout", false, "print the rewritten file instead of writing it")
	write := func(cmd *cobra.Command, file string, out []byte) error {
		if stdout {
			_, err := cmd.OutOrStdout().Write(out)
			return err
		}
		return replaceFile(file, out)
	}
	dist := &cobra.Command{
		Use:   "distill FILE NAME",
		Short: "Put the code ptk distill wrote in front of the ptool NAME declared in FILE",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return usageError{err}
			}
			file := code
			if file == "" {
				file = args[1] + "_distilled.go"
			}
			gen, err := os.ReadFile(file)
			if err != nil {
				return usagef("the code ptk distill wrote: %v (name it with --code)", err)
			}
			out, err := distill.Refactor(src, args[1], gen)
			if err != nil {
				return err
			}
			return write(cmd, args[0], out)
		},
	}
	dist.Flags().StringVar(&code, "code", "", "the Go file ptk distill wrote (default NAME_distilled.go)")
	expand := &cobra.Command{
		Use:   "expand FILE FUNC",
		Short: "Make a ptool of the Go function FUNC, answered by the model (--keep-code: FUNC answers first)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return usageError{err}
			}
			out, err := distill.Expand(src, args[1], distill.ExpandOptions{KeepCode: keepCode})
			if err != nil {
				return err
			}
			return write(cmd, args[0], out)
		},
	}
	expand.Flags().BoolVar(&keepCode, "keep-code", false, "keep FUNC in front of the model as the code path (it must return ptool.ErrFallback where it is not sure)")
	cmd.AddCommand(dist, expand)
	return cmd
}

// replaceFile writes data over file as a whole or not at all: into a new
// file beside it, with its mode, renamed over it, so that an error (a full
// disk, a signal) never leaves the user's source cut short.
func replaceFile(file string, data []byte) error {
	file, err := filepath.EvalSymlinks(file) // a link stays a link to the file it names
	if err != nil {
		return err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing left to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
