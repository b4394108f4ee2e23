package main

import (
	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/report"
)

// clusterFlags select a live cluster to scan, read-only.
type clusterFlags struct {
	enabled       bool
	context       string
	kubeconfig    string
	allNamespaces bool
}

func (c *clusterFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&c.enabled, "cluster", false, "scan the objects of the kubeconfig context's live cluster, read-only (PATHs are then optional)")
	f.StringVar(&c.context, "context", "", "kubeconfig context for --cluster (default: the current context)")
	f.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file for --cluster (default: $KUBECONFIG or ~/.kube/config)")
	f.BoolVarP(&c.allNamespaces, "all-namespaces", "A", false, "with --cluster, scan every namespace")
}

// check rejects cluster flags that would be silently ignored.
func (c *clusterFlags) check(cmd *cobra.Command) error {
	if !c.enabled {
		for _, name := range []string{"context", "kubeconfig", "all-namespaces"} {
			if cmd.Flags().Changed(name) {
				return usageError(cmd, "--%s needs --cluster", name)
			}
		}
		return nil
	}
	if c.allNamespaces && cmd.Flags().Changed("namespace") {
		return usageError(cmd, "--namespace and --all-namespaces exclude each other")
	}
	return nil
}

// read lists the cluster's objects. Kinds the cluster does not serve are
// notes on stderr; kinds that could not be read come back as input errors,
// so the exit code says the scan is incomplete.
// progress, when set, is told as each kind is listed.
func (c *clusterFlags) read(cmd *cobra.Command, namespace string, progress func(done, total int)) ([]load.File, []load.Error, error) {
	target, err := cluster.Connect(c.kubeconfig, c.context)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case c.allNamespaces:
		namespace = ""
	case !cmd.Flags().Changed("namespace"):
		namespace = target.Namespace
	}
	res := cluster.Read(cmd.Context(), cluster.Options{Config: target.Config, Context: target.Context, Namespace: namespace, Progress: progress})
	for _, n := range res.Notes {
		report.Message(cmd.ErrOrStderr(), "note: "+n)
	}
	return res.Files, res.Errors, nil
}
