package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/model/rollout"
)

// version is set at build time with -ldflags "-X main.version=v0.1.0".
var version = ""

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "backfire",
		Short: "Find the Kubernetes safeguards that will backfire, before they take production down",
		Long: `backfire finds probes, limits and rollout features that were added for safety and,
under a condition the manifest already fixes, cause the outage instead. Each finding
comes with the causal chain, the arithmetic filled in from the manifest's own numbers,
and a fix that applies.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newScanCommand(), newRulesCommand(), newExplainCommand(), newSimulateCommand(), newFixCommand(), newServeCommand(), newVersionCommand())
	root.AddCommand(newDiagnoseCommand())
	return root
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the Argo Rollouts controller versions the rules model",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "backfire %s\n", versionString())
			fmt.Fprintf(cmd.OutOrStdout(), "Argo Rollouts controller modelled: %s (default --rollouts-version %s); API types from %s\n",
				rollout.ModelledRange, rollout.DefaultVersion, rollout.TypesVersion)
			return nil
		},
	}
}

// loadConfig reads the configuration file given with --config, or else the
// .backfire.yaml found from the working directory up: every command that
// runs rules reads it the same way.
func loadConfig(path string) (*config.Config, error) {
	if path != "" {
		return config.Load(path)
	}
	return config.Discover(".")
}
