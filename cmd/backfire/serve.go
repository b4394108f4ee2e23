package main

import (
	"log/slog"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/webhook"
)

type serveFlags struct {
	addr, healthAddr    string
	certFile, keyFile   string
	mode, failOn        string
	configPath          string
	rolloutsVersion     string
	clusterMode         string
	kubeconfig, context string
	logLevel            string
	maxInFlight         int
	maxMemory           string
}

func newServeCommand() *cobra.Command {
	var fl serveFlags
	cmd := &cobra.Command{
		Use:   "serve --tls-cert FILE --tls-key FILE",
		Short: "Run the rules as a validating admission webhook (AdmissionReview v1 at /validate)",
		Long: `Serve answers the API server's AdmissionReview v1 requests over HTTPS at /validate,
judging each object with the same rules, suppression annotations and .backfire.yaml
as scan. In warn mode findings come back as warnings (kubectl prints them); in deny
mode objects with findings at or above --fail-on are refused with the rule, the field
and the fix. An UPDATE is judged on the new object; a finding the old object had is
reported but never refused. The certificate files are reloaded when they change.

Cross-object context (a Rollout's AnalysisTemplates, its HPA or ScaledObject) is read
from the cluster through cached informers, read-only; without cluster access the
findings say what was assumed. /livez, /readyz and /metrics are served over plain
HTTP on --health-addr. See docs/webhook.md and deploy/.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, &fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.addr, "addr", ":8443", "HTTPS address of /validate")
	f.StringVar(&fl.healthAddr, "health-addr", ":8081", "plain HTTP address of /livez, /readyz and /metrics")
	f.StringVar(&fl.certFile, "tls-cert", "", "TLS certificate file (PEM); reloaded when it changes")
	f.StringVar(&fl.keyFile, "tls-key", "", "TLS private key file (PEM); reloaded when it changes")
	f.StringVar(&fl.mode, "mode", "warn", "warn: admit and return findings as warnings; deny: refuse new findings at or above --fail-on")
	f.StringVar(&fl.failOn, "fail-on", "error", "in deny mode, the lowest severity refused: error or warning")
	f.StringVar(&fl.configPath, "config", "", "configuration file (default: .backfire.yaml found from the working directory up)")
	f.StringVar(&fl.rolloutsVersion, "rollouts-version", rollout.DefaultVersion, "Argo Rollouts controller version the Argo rules assume")
	f.StringVar(&fl.clusterMode, "cluster", "auto", "read context objects from the cluster: auto (if a kubeconfig or service account is there), on (required), off")
	f.StringVar(&fl.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the pod's service account)")
	f.StringVar(&fl.context, "context", "", "kubeconfig context (default: the current context)")
	f.StringVar(&fl.logLevel, "log-level", "info", "debug (one line per request), info, warn or error")
	f.IntVar(&fl.maxInFlight, "max-in-flight", 0, "requests judged at once (default one per CPU); others wait, and are answered \"not judged\" (refused in deny mode) if none frees up in time")
	f.StringVar(&fl.maxMemory, "max-judging-memory", "256Mi", "memory the requests read and judged at once may hold, estimated from their size; others wait, then are answered \"not judged: overloaded\" (refused in deny mode). Keep it under GOMEMLIMIT with room for the cluster caches")
	return cmd
}

func runServe(cmd *cobra.Command, fl *serveFlags) error {
	if fl.certFile == "" || fl.keyFile == "" {
		return usageError(cmd, "serve needs --tls-cert and --tls-key (the API server calls webhooks over HTTPS only)")
	}
	mode, err := webhook.ParseMode(fl.mode)
	if err != nil {
		return usageError(cmd, "--mode: %v", err)
	}
	failOn, err := finding.ParseSeverity(fl.failOn)
	if err != nil || (failOn != finding.Error && failOn != finding.Warning) {
		return usageError(cmd, "--fail-on: want error or warning, not %q", fl.failOn)
	}
	rv, err := rollout.ParseVersion(fl.rolloutsVersion)
	if err != nil {
		return usageError(cmd, "--rollouts-version: %v", err)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(fl.logLevel)); err != nil {
		return usageError(cmd, "--log-level: %v", err)
	}
	maxMemory, err := resource.ParseQuantity(fl.maxMemory)
	if err != nil || maxMemory.Value() < 16<<20 {
		return usageError(cmd, "--max-judging-memory: want a quantity of at least 16Mi (256Mi, 1Gi), not %q", fl.maxMemory)
	}
	cfg, err := loadConfig(fl.configPath)
	if err != nil {
		return usageError(cmd, "%v", err)
	}

	log := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	// controller-runtime and client-go log through logr and klog: one
	// stream, one format.
	logf.SetLogger(logr.FromSlogHandler(log.Handler()))
	klog.SetSlogLogger(log)

	var cc *webhook.ClusterContext
	switch strings.ToLower(fl.clusterMode) {
	case "off":
	case "on", "auto":
		target, err := cluster.Connect(fl.kubeconfig, fl.context)
		if err == nil {
			cc, err = webhook.NewClusterContext(target.Config, target.Context)
		}
		switch {
		case err != nil && fl.clusterMode == "on":
			return usageError(cmd, "--cluster on: %v", err)
		case err != nil:
			log.Warn("no cluster access: objects are judged alone, and findings say so", "err", err.Error())
		default:
			for _, gap := range cc.Unserved() {
				log.Info("cluster context: " + gap)
			}
		}
	default:
		return usageError(cmd, "--cluster: want auto, on or off, not %q", fl.clusterMode)
	}
	judge, err := webhook.NewJudge(nil, rules.Options{Config: cfg, RolloutsVersion: rv}, contextOf(cc))
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	if mode == webhook.Warn {
		judge.WithoutFixes() // warnings show no fix
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = webhook.Serve(ctx, webhook.ServeOptions{
		Addr: fl.addr, HealthAddr: fl.healthAddr,
		CertFile: fl.certFile, KeyFile: fl.keyFile,
		Handler: webhook.HandlerOptions{
			Judge:          judge,
			Policy:         webhook.Policy{Mode: mode, FailOn: failOn},
			MaxInFlight:    fl.maxInFlight,
			MaxMemoryBytes: maxMemory.Value(),
		},
		Cluster: cc,
		Log:     log,
	})
	if err != nil {
		log.Error("webhook stopped", "err", err.Error())
		return exitError{exitUsage}
	}
	return nil
}

// contextOf avoids a typed nil in the interface: without a cluster the
// judge knows it has no context.
func contextOf(cc *webhook.ClusterContext) webhook.Context {
	if cc == nil {
		return nil
	}
	return cc
}
