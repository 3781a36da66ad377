package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/protocol"
)

func newPromptCmd() *cobra.Command {
	var toolsFile, instructions string
	cmd := &cobra.Command{
		Use:   "prompt --tools FILE",
		Short: "Print the system prompt that teaches a model the protocol and the tools",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if toolsFile == "" {
				return usagef("prompt needs --tools FILE (a JSON array of tool definitions)")
			}
			tools, err := loadTools(toolsFile)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), protocol.PTK{}.SystemPrompt(instructions, tools))
			return nil
		},
	}
	cmd.Flags().StringVar(&toolsFile, "tools", "", "JSON file of tool definitions")
	cmd.Flags().StringVar(&instructions, "instructions", "", "your own instructions, written before the protocol")
	return cmd
}
