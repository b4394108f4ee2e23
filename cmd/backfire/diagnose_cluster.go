package main

import (
	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/diagnose"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/observe"
)

// podLogs fetches container logs for diagnose --cluster; tests replace it
// where the cluster has no kubelet to serve them.
var podLogs cluster.LogFunc

type livePod struct {
	Pod    load.File
	Events []diagnose.Stream
	Logs   []observe.Log
	Notes  []string
}

// readLivePod reads a pod, its events and its logs, read-only.
func readLivePod(cmd *cobra.Command, c *clusterFlags, namespace, name string) (*livePod, error) {
	target, err := cluster.Connect(c.kubeconfig, c.context)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = target.Namespace
	}
	res, err := cluster.ReadPod(cmd.Context(), cluster.PodOptions{Config: target.Config, Context: target.Context,
		Namespace: namespace, Name: name, Logs: podLogs})
	if err != nil {
		return nil, err
	}
	lp := &livePod{Pod: res.Pod, Notes: res.Notes}
	if len(res.Events) > 0 {
		lp.Events = append(lp.Events, diagnose.Stream{Name: res.EventsName, Data: res.Events})
	}
	for _, l := range res.Logs {
		lp.Logs = append(lp.Logs, observe.Log{Container: l.Container, File: l.Name, Data: l.Data})
	}
	return lp, nil
}
