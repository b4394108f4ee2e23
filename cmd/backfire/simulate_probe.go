package main

import (
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/simulate/probesim"
	"backfire.dev/backfire/internal/simulate/probeview"
	"backfire.dev/backfire/internal/source"
)

func init() { simulators = append(simulators, newSimulateProbeCommand) }

type simulateProbeFlags struct {
	file         string
	container    string
	latency      string
	latencyTrace string
	recovery     time.Duration
	afterCrash   bool
	maxBackoff   time.Duration
	hours        float64
	format       string
}

func newSimulateProbeCommand() *cobra.Command {
	var fl simulateProbeFlags
	cmd := &cobra.Command{
		Use:   "probe -f FILE --latency p50=40ms,p99=1.2s | --latency-trace FILE [--recovery 90s] [--after-crash] [--max-backoff 5m] [--hours 24]",
		Short: "Play a container's probes through a day of latency and crash recoveries, as written and with the fix",
		Long: `Simulate probe plays the kubelet (initial delay, period, timeout, thresholds, the
startup probe holding liveness back, the kill, the grace period, the restart back-off)
against a server whose query latency follows a distribution (--latency) or a measured
trace (--latency-trace: lines "OFFSET LATENCY", e.g. "90s 1.2s"), and that after each
kill recovers for --recovery, during which a probe that fails during recovery fails.
With --after-crash the first start recovers too, as after a crash: a startup probe that
fails during recovery kills nothing on a clean start, and its loop (BF105) begins there.
It reports restarts per day, time in recovery and whether the loop ever ends, and,
from the readiness probe played in the same run, the time not ready, its stretches and
the time from a kill to ready again, for the manifest as written and with the fix BF101 (BF105 when the startup probe kills, or
BF102) proposes. --max-backoff is the node's cap on the restart back-off (300 s unless
the kubelet's configuration lowers it). Deterministic: the same input gives the same
output.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulateProbe(cmd, &fl) },
	}
	f := cmd.Flags()
	f.StringVarP(&fl.file, "file", "f", "", "manifest with the workload (- for standard input)")
	f.StringVar(&fl.container, "container", "", "container to simulate (default: the first with a liveness or startup probe)")
	f.StringVar(&fl.latency, "latency", "", `query latency quantiles, e.g. "p50=40ms,p99=1.2s"`)
	f.StringVar(&fl.latencyTrace, "latency-trace", "", `file of "OFFSET LATENCY" samples (or "RFC3339-TIME LATENCY")`)
	f.DurationVar(&fl.recovery, "recovery", 90*time.Second, "how long the server recovers after a kill")
	f.BoolVar(&fl.afterCrash, "after-crash", false, "start in crash recovery, as after an OOM kill, a node failure or a stop that ended in SIGKILL (BF601): how a startup probe's loop begins")
	f.DurationVar(&fl.maxBackoff, "max-backoff", 300*time.Second, "the node's cap on the restart back-off (kubelet crashLoopBackOff.maxContainerRestartPeriod, 1s to 300s, whole seconds; from Kubernetes 1.35)")
	f.Float64Var(&fl.hours, "hours", 24, "hours to simulate")
	f.StringVar(&fl.format, "format", "text", "output format: "+strings.Join(probeview.Formats, ", "))
	return cmd
}

func runSimulateProbe(cmd *cobra.Command, fl *simulateProbeFlags) error {
	switch {
	case fl.file == "":
		return usageError(cmd, "simulate probe needs -f FILE")
	case (fl.latency == "") == (fl.latencyTrace == ""):
		return usageError(cmd, "simulate probe needs one of --latency and --latency-trace")
	case !slices.Contains(probeview.Formats, fl.format):
		return usageError(cmd, "unknown --format %q (want %s)", fl.format, strings.Join(probeview.Formats, ", "))
	case !(fl.hours > 0 && fl.hours <= 24*366): // NaN is in no range
		return usageError(cmd, "--hours must be more than 0 and at most a year")
	case fl.recovery < 0:
		return usageError(cmd, "--recovery must not be negative")
	case fl.maxBackoff < time.Second || fl.maxBackoff > 300*time.Second || fl.maxBackoff%time.Second != 0:
		// The kubelet's own range (its configuration's validation).
		return usageError(cmd, "--max-backoff must be whole seconds from 1s to 300s, as the kubelet accepts")
	}
	var lat probesim.Latency
	if fl.latency != "" {
		q, err := probesim.ParseQuantiles(fl.latency)
		if err != nil {
			return usageError(cmd, "--latency: %v", err)
		}
		lat = q
	} else {
		data, err := source.ReadFile(fl.latencyTrace, source.DefaultMaxFileSize)
		if err != nil {
			return usageError(cmd, "--latency-trace %s: %v", fl.latencyTrace, err)
		}
		tr, err := probesim.ParseTrace(fl.latencyTrace, data)
		if err != nil {
			return usageError(cmd, "%v", err)
		}
		lat = tr
	}
	name, data := fl.file, []byte(nil)
	var err error
	if fl.file == "-" {
		name = "<stdin>"
		data, err = source.ReadStdin(cmd.InOrStdin(), source.DefaultMaxFileSize)
	} else {
		data, err = source.ReadFile(fl.file, source.DefaultMaxFileSize)
	}
	if err != nil {
		return usageError(cmd, "%s: %v", name, err)
	}
	rep, err := probeview.Simulate(name, data, probeview.Options{Container: fl.container, Latency: lat, Recovery: fl.recovery.Seconds(), Hours: fl.hours, AfterCrash: fl.afterCrash, BackoffCap: int(fl.maxBackoff / time.Second)})
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	out := cmd.OutOrStdout()
	switch fl.format {
	case "json":
		return rep.JSON(out)
	case "svg":
		svg, err := rep.SVG()
		if err != nil {
			return err
		}
		_, err = out.Write(svg)
		return err
	case "html":
		page, err := rep.HTML()
		if err != nil {
			return err
		}
		_, err = out.Write(page)
		return err
	}
	return rep.Text(out)
}
