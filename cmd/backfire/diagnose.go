package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/diagnose"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/source"
)

type diagnoseFlags struct {
	events     []string
	logs       []string
	format     string
	failOn     string
	configPath string
	color      string
	cluster    clusterFlags
	namespace  string
}

func newDiagnoseCommand() *cobra.Command {
	var fl diagnoseFlags
	cmd := &cobra.Command{
		Use:   "diagnose POD.yaml|CAPTURE.txt|LOG|- [--events FILE]... [--logs [CONTAINER=]FILE]...  |  --logs [CONTAINER=]FILE...  |  --cluster [--context C] -n NS POD",
		Short: "Read a restarting pod: are its restarts its own probe's arithmetic?",
		Long: `Diagnose reads a pod (kubectl get pod -o yaml|json: a Pod or a List), its events
(kubectl get events -o json, core/v1 or events.k8s.io/v1) and its containers' logs,
or what kubectl prints for people and people paste: kubectl describe pod, kubectl get
pods and get events tables, or a fragment of them (a Liveness line, Events rows); the
form is told from the text, and what a capture does not show is said, not guessed.
It says whether the restarts come at the liveness or startup probe's arithmetic
(BF501), what the exit codes rule out (BF502), and whether the logs show a server
killed while it recovers (BF503). A log named after a container that is not in the
pod is a client's: its "server is recovering" errors are tied to the pod's restarts.
The static rules run on the pod's spec too. --cluster reads the same from a live
cluster, read-only: the pod, its events, current and previous container logs.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 usage
error, or input that could not be read or parsed (reported with file and line).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiagnose(cmd, args, &fl)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&fl.events, "events", nil, "events file: kubectl get events -o json, or its table as kubectl prints it (repeatable)")
	f.StringArrayVar(&fl.logs, "logs", nil, "container log, [CONTAINER=]FILE; a container not in the pod is a client (repeatable)")
	f.StringVar(&fl.format, "format", "text", "output format: text or json")
	f.StringVar(&fl.failOn, "fail-on", "error", "lowest severity that makes the exit code 1: error, warning, info or none")
	f.StringVar(&fl.configPath, "config", "", "configuration file (default: .backfire.yaml found from the working directory up)")
	f.StringVar(&fl.color, "color", "auto", "colour the text report: auto, always or never")
	f.BoolVar(&fl.cluster.enabled, "cluster", false, "read the pod, its events and its logs from the kubeconfig context's cluster, read-only")
	f.StringVar(&fl.cluster.context, "context", "", "kubeconfig context for --cluster (default: the current context)")
	f.StringVar(&fl.cluster.kubeconfig, "kubeconfig", "", "kubeconfig file for --cluster (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVarP(&fl.namespace, "namespace", "n", "", "with --cluster, the pod's namespace (default: the context's)")
	return cmd
}

func runDiagnose(cmd *cobra.Command, args []string, fl *diagnoseFlags) error {
	// --logs alone is a diagnosis of the logs: what they show of a pod
	// that is not in the input.
	logsAlone := len(args) == 0 && len(fl.logs) > 0 && !fl.cluster.enabled
	if len(args) != 1 && !logsAlone {
		return usageError(cmd, "diagnose needs one POD file (or - for standard input), or --cluster and a pod name, or --logs alone")
	}
	if !fl.cluster.enabled {
		for _, name := range []string{"context", "kubeconfig", "namespace"} {
			if cmd.Flags().Changed(name) {
				return usageError(cmd, "--%s needs --cluster", name)
			}
		}
	}
	if fl.format != "text" && fl.format != "json" {
		return usageError(cmd, "unknown --format %q (want text or json)", fl.format)
	}
	failOn, err := finding.ParseSeverity(fl.failOn)
	if err != nil {
		return usageError(cmd, "--fail-on: %v", err)
	}
	cfg, err := loadConfig(fl.configPath)
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	in := diagnose.Input{Rules: rules.Options{Config: cfg}}
	for _, p := range fl.events {
		data, err := source.ReadFile(p, source.DefaultMaxFileSize)
		if err != nil {
			return usageError(cmd, "--events %s: %v", p, err)
		}
		in.Events = append(in.Events, diagnose.Stream{Name: p, Data: data})
	}
	for _, spec := range fl.logs {
		container, file, found := strings.Cut(spec, "=")
		if !found {
			container, file = "", spec
		}
		if file == "" {
			return usageError(cmd, "--logs %q: want [CONTAINER=]FILE", spec)
		}
		data, err := source.ReadFile(file, source.DefaultMaxFileSize)
		if err != nil {
			return usageError(cmd, "--logs %s: %v", file, err)
		}
		in.Logs = append(in.Logs, observe.Log{Container: container, File: file, Data: data})
	}
	var notes []string
	if fl.cluster.enabled {
		live, err := readLivePod(cmd, &fl.cluster, fl.namespace, args[0])
		if err != nil {
			return usageError(cmd, "%v", err)
		}
		in.Parsed, notes = &live.Pod, live.Notes
		in.Events = append(in.Events, live.Events...)
		in.Logs = append(in.Logs, live.Logs...)
	} else if logsAlone {
		// no pod: Run reads the logs alone
	} else if args[0] == "-" {
		data, err := source.ReadStdin(cmd.InOrStdin(), source.DefaultMaxFileSize)
		if err != nil {
			return usageError(cmd, "%v", err)
		}
		in.Pods = diagnose.Stream{Name: "<stdin>", Data: data}
	} else {
		data, err := source.ReadFile(args[0], source.DefaultMaxFileSize)
		if err != nil {
			return usageError(cmd, "%s: %v", args[0], err)
		}
		in.Pods = diagnose.Stream{Name: args[0], Data: data}
	}
	res, err := diagnose.Run(in)
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	res.Notes = append(notes, res.Notes...)
	out := cmd.OutOrStdout()
	switch fl.format {
	case "json":
		for _, n := range res.Notes {
			fmt.Fprintf(cmd.ErrOrStderr(), "backfire: note: %s\n", report.Printable(n))
		}
		err = report.JSON(out, res.Result, report.JSONOptions{})
	default:
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		writeObserved(out, res)
		err = report.Text(out, res.Result, report.TextOptions{Color: useColor(fl.color, out)})
	}
	if err != nil {
		return err
	}
	return exitError{exitCode(res.Result, failOn)}
}

// writeObserved prints what was read about each pod before the findings,
// so that a reader sees the evidence the rules had, and for a printed
// capture what it did not hold.
func writeObserved(out io.Writer, res *diagnose.Diagnosis) {
	// What a capture held is printed as it was read: its names and
	// messages are escaped, as the report's are (a pasted ESC[2J, an
	// OSC 52 or a BEL must not drive the reader's terminal).
	w := escapingWriter{out}
	for _, o := range res.Pods {
		pr := o.Pod.Printed
		head := fmt.Sprintf("%s  %s", o.Pod.Ref, o.Pod.Doc.File)
		if pr != nil {
			head += fmt.Sprintf(" (%s, line %d)", pr.Form(), max(pr.First(), 1))
		}
		fmt.Fprintln(w, head)
		for _, st := range slices.Concat(o.Pod.Pod.Status.InitContainerStatuses, o.Pod.Pod.Status.ContainerStatuses) {
			fmt.Fprintln(w, "  "+containerLine(o.Pod, st))
		}
		read := fmt.Sprintf("  read: %d events about this pod", len(o.Events))
		if o.Ignored > 0 {
			read += fmt.Sprintf(" (%d about other objects, not used)", o.Ignored)
		}
		for _, l := range o.Logs {
			read += fmt.Sprintf("; log of %s (%s)", l.Container, l.File)
		}
		for _, l := range o.Clients {
			read += fmt.Sprintf("; client log of %s (%s)", l.Container, l.File)
		}
		fmt.Fprintln(w, read)
		if pr != nil && len(pr.Lacks) > 0 {
			fmt.Fprintf(w, "  not in the capture: %s\n", strings.Join(pr.Lacks, "; "))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "  no evidence: %s\n", n)
	}
	fmt.Fprintln(w)
}

// escapingWriter writes each line with its control characters escaped
// (report.Printable); the line's own end stays a newline.
type escapingWriter struct{ w io.Writer }

func (e escapingWriter) Write(p []byte) (int, error) {
	s := string(p)
	var b strings.Builder
	for s != "" {
		line, rest, nl := strings.Cut(s, "\n")
		b.WriteString(report.Printable(line))
		if nl {
			b.WriteByte('\n')
		}
		s = rest
	}
	if _, err := io.WriteString(e.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// containerLine says what a container's status shows, and no more: a
// printed capture may hold a restart count without a last state, or a
// reason without its exit code.
func containerLine(p *observe.Pod, st corev1.ContainerStatus) string {
	name := st.Name
	if p.Printed != nil && p.Printed.PodLevel {
		name = "all containers (a kubectl get pods row)"
	} else {
		name = "container " + name
	}
	path := p.StatusPath(st.Name)
	line := name + ":"
	if p.Knows(path + ".restartCount") {
		line += fmt.Sprintf(" %d restarts", st.RestartCount)
	} else {
		line += " restart count not shown"
	}
	for _, s := range []struct {
		t     *corev1.ContainerStateTerminated
		field string
		what  string
	}{{st.LastTerminationState.Terminated, "lastState", "last exit"}, {st.State.Terminated, "state", "stopped, exit"}} {
		t := s.t
		if t == nil {
			continue
		}
		tp := path + "." + s.field + ".terminated"
		switch {
		case p.Knows(tp + ".exitCode"):
			line += fmt.Sprintf(", %s %d (%s)", s.what, t.ExitCode, t.Reason)
		default:
			line += fmt.Sprintf(", %s %s (exit code not shown)", s.what, t.Reason)
		}
		if !t.StartedAt.IsZero() && t.FinishedAt.After(t.StartedAt.Time) {
			line += fmt.Sprintf(" after %s", t.FinishedAt.Sub(t.StartedAt.Time))
		}
		break
	}
	switch {
	case st.State.Running != nil && !st.State.Running.StartedAt.IsZero():
		line += ", running since " + st.State.Running.StartedAt.UTC().Format("2006-01-02 15:04:05Z")
	case st.State.Running != nil:
		line += ", running"
	case st.State.Waiting != nil && st.State.Waiting.Reason != "":
		line += ", waiting: " + st.State.Waiting.Reason
	}
	return line
}
