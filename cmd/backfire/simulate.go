package main

import "github.com/spf13/cobra"

// newSimulateCommand groups the simulators: each subcommand plays a
// configuration forward in time (a rollout through the controller twin, a
// probe through the kubelet's arithmetic).
func newSimulateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Play a rollout or a probe configuration forward in time",
		Args:  cobra.NoArgs,
	}
	for _, sub := range simulators {
		cmd.AddCommand(sub())
	}
	return cmd
}

// simulators is filled by each simulator's file (simulate_rollout.go,
// simulate_probe.go) in an init function, so that they stay independent.
var simulators []func() *cobra.Command
