package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/buildinfo"
	"backfire.dev/backfire/internal/model/rollout"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and date of the build, and the Argo Rollouts controller versions the rules model",
		Long: `Print the version, commit and date of the build, and the Argo Rollouts controller
versions the rules model.

A release sets all three. A go build or go install from a git clone records the
commit, its date and whether the work tree had changes (the Go toolchain's VCS
stamp); go install of a module version records that version. go run records
nothing, and says so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), buildinfo.Current())
			fmt.Fprintf(cmd.OutOrStdout(), "Argo Rollouts controller modelled: %s (default --rollouts-version %s); API types from %s\n",
				rollout.ModelledRange, rollout.DefaultVersion, rollout.TypesVersion)
			return nil
		},
	}
}
