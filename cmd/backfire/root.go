package main

import (
	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/config"
)

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
	decorate(root)
	return root
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
