package diagnose

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
)

// A capture is what someone pasted into a public issue thread, where the
// cause of the restarts (or of their absence) was then established; the
// source of each is in testdata/captures/SOURCES.md. Diagnose must read
// every one, and must never contradict the cause.
type capture struct {
	file  string
	cause string
	// want are findings the diagnosis must make: "RULE severity text".
	want []string
	// never are findings that would contradict the cause.
	never []string
}

// Claims that contradict a cause, by cause.
var (
	notTheProbe   = []string{"BF501 error", "BF501 warning"} // an OOM kill, a missing Secret or image, a crash of its own
	notAnOOM      = []string{"BF502 warning reason OOMKilled", "BF502 warning exit 137 with reason OOMKilled"}
	notNeverStart = []string{"BF502 warning the container never started"}
)

var captures = []capture{
	// Round 2's fresh table (docs/diagnose.md).
	{file: "k8s-106682-invalid-probe-command.txt", cause: "an invalid liveness command errors, and the kubelet throws the errored result away: the container is not restarted",
		want: []string{`BF501 warning the liveness probe cannot run: its command "invalid"`}, never: append([]string{"BF501 error"}, notAnOOM...)},
	{file: "akhq-662-liveness-refused.txt", cause: "the liveness probe's port changed with the version: refused, killed",
		want: []string{"BF501 warning the kubelet killed container akhq 2 times for failing its liveness probe"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "deckhouse-6368-curl-missing.txt", cause: "curl, the liveness probe's command, is not in the image",
		want: []string{`BF501 warning the liveness probe cannot run: its command "curl"`}, never: notAnOOM},
	{file: "shenyu-5490-wget-one-string.txt", cause: "the liveness probe's pipeline was written as one element",
		want: []string{`BF501 warning the liveness probe cannot run: its command "wget -q -O -`}, never: notAnOOM},
	{file: "aks-store-197-mongosh-missing.txt", cause: "mongosh, the liveness probe's command, is not in the image",
		want: []string{`BF501 error the liveness probe cannot run: its command "mongosh"`}, never: notAnOOM},
	{file: "hmcts-28772-oomkilled.txt", cause: "the memory limit is too low: OOM kills",
		want: []string{"BF502 warning reason OOMKilled"}, never: notTheProbe},
	{file: "k8s-76453-script-and-arg-one-element.txt", cause: "the probe's script and its argument were one element",
		want: []string{"BF501 error the liveness probe cannot run"}, never: notAnOOM},
	{file: "elastic-306-sh-c-one-element.txt", cause: "sh -c and the script were one element",
		want: []string{`BF501 error the liveness probe cannot run: its command "sh -c | /tmp/liveness.sh"`}, never: notAnOOM},
	{file: "bitnami-36199-readiness-unbound-variable.txt", cause: "the chart's readiness script fails (unbound variable); nothing restarts",
		want: []string{"BF501 info the readiness probe failed 7246 times: a readiness probe never restarts a container"}, never: []string{"BF501 error", "BF501 warning", "BF502"}},
	{file: "vijayrod-liveness-exec-demo.txt", cause: "the liveness-exec demo: the probe passes for 30 s, then fails; sh ignores SIGTERM, so each kill ends in SIGKILL",
		want: []string{"BF501 info 2 restarts, last run 74 s: does not match the liveness probe's 5 + 3 x 5 = 20 s", "BF502 info exit 137 = 128 + 9 (SIGKILL)"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "reflector-426-startup-refused.txt", cause: "the startup probe was refused until it killed the container (no more established)",
		want: []string{"BF501 warning the kubelet killed container reflector 1 time for failing its startup probe"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "k8s-17460-get-po-crashloop-2015.txt", cause: "not established: rows only",
		never: []string{"BF501", "BF502"}},
	{file: "voting-app-11-readiness-curl-missing.txt", cause: "curl, the readiness probe's command, is not in the image; nothing restarts",
		want: []string{"BF501 info the readiness probe failed 16 times: a readiness probe never restarts a container"}, never: []string{"BF501 error", "BF501 warning", "BF502"}},
	{file: "seldon-283-liveness-refused-hook-curl.txt", cause: "a lifecycle hook's curl was missing from the image; the liveness probe was refused",
		want: []string{"BF501 info the liveness probe failed 1 time"}, never: append(append([]string{"BF501 error", "BF502"}, notAnOOM...), notNeverStart...)},
	{file: "truecharts-8076-startup-401.txt", cause: "the startup probe got 401 from the app and killed it",
		want: []string{"BF501 info the startup probe failed 1 time"}, never: append(append([]string{"BF502"}, notAnOOM...), notNeverStart...)},

	{file: "aegis-events-missing-key.txt", cause: "a key the container reads is missing from its Secret",
		want: []string{"BF502 warning the container never started: the kubelet could not create the container: a Secret, ConfigMap or key"}, never: notTheProbe},
	{file: "aegis-get-pods-config-error.txt", cause: "a key the container reads is missing from its Secret",
		want: []string{"BF502 warning the container never started: the kubelet could not create the container"}, never: notTheProbe},
	{file: "azure-operator-oomkilled-last-state.txt", cause: "the memory limit is too low: OOM kills",
		want: []string{"BF502 warning exit 137 with reason OOMKilled"}, never: notTheProbe},
	{file: "bitnami-11263-exec-probe-multiline.txt", cause: "the readiness script's exec replaces the shell, so its file test never runs; nothing restarts",
		never: []string{"BF501 error", "BF501 warning", "BF502"}},
	{file: "bitnami-23390-get-events-watch.txt", cause: "mongod stopped on purpose (SIGSTOP); the liveness probe then restarted it (the excerpt ends before the kill)",
		never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "drain-node-7-image-not-found.txt", cause: "the image tag was never published",
		want: []string{"BF502 warning the container never started: the kubelet could not pull the image"}, never: notTheProbe},
	{file: "harbor-20272-recovery-mode.txt", cause: "harbor-db's liveness probe failed while PostgreSQL was in recovery mode",
		want: []string{"BF501 info the liveness probe failed 3 times"}, never: append(append([]string{"BF502"}, notAnOOM...), notNeverStart...)},
	{file: "iks-handson-7-config-error.txt", cause: `the Secret "my-password" does not exist`,
		want: []string{"BF502 warning the container never started: the kubelet could not create the container"}, never: notTheProbe},
	{file: "k8s-10861-describe-2015-memleak.txt", cause: "a memory leak hits the 50Mi limit (OOM kills; describe did not print the last state then)",
		never: append([]string{"BF501 info", "BF502"}, notTheProbe...)},
	{file: "k8s-11140-events-2015-killing.txt", cause: "a failing liveness probe restarts Elasticsearch",
		want: []string{"BF501 info the kubelet killed container elasticsearch 3 times, and the capture does not say why"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "k8s-11948-get-watch-2015.txt", cause: "the liveness probe's path is wrong (404): liveness restarts",
		never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "k8s-131530-oomkilled-exit-0.txt", cause: "a process in the container was OOM-killed while the main process exited 0 (the runtime set reason OOMKilled)",
		want: []string{"BF502 warning reason OOMKilled with exit 0"}, never: append([]string{"BF502 warning exit 0 with reason OOMKilled: the kernel's OOM killer ended the container"}, notTheProbe...)},
	{file: "k8s-131026-liveness-events.txt", cause: "the file the liveness probe reads was deleted: liveness kills",
		want: []string{"BF501 info the liveness probe failed 4 times"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "k8s-16045-events-2015-health-check.txt", cause: "a broken health check restarts the container",
		want: []string{"BF501 info the kubelet killed container mypod 2 times"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "k8s-25149-get-events-2016.txt", cause: "the probes errored because the container had already stopped",
		want: []string{"BF501 info 2 probe errors say the container was not running"}, never: []string{"BF501 error", "BF501 warning"}},
	{file: "k8s-6532-events-2015-tabs.txt", cause: "a bad liveness probe kills nginx",
		want: []string{"BF501 info the kubelet killed container nginx 2 times"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "k8s-70231-readiness-only.txt", cause: "the readiness probe's initial delay is too short; the pod becomes ready later, nothing restarts",
		want: []string{"BF501 info the readiness probe failed 1 time: a readiness probe never restarts a container"}, never: []string{"BF501 error", "BF501 warning", "BF502"}},
	{file: "k8s-80466-secret-not-found.txt", cause: "the Secret was created after the Job's pod",
		want: []string{"BF502 warning the container never started: the kubelet could not create the container"}, never: notTheProbe},
	{file: "k8s-98780-get-events-startup-once.txt", cause: "the startup probe failed once and then passed: no restart",
		want: []string{"BF501 info the startup probe failed 1 time"}, never: []string{"BF501 error", "BF501 warning", "BF502"}},
	{file: "mailu-171-probe-message-in-prose.txt", cause: "the probe's curl command was split at an unquoted space and timed out",
		want: []string{"BF501 info the liveness probe failed 1 time"}, never: append(append([]string{"BF501 error", "BF501 warning", "BF502"}, notAnOOM...), notNeverStart...)},
	{file: "manageiq-475-pidof-missing.txt", cause: "pidof, the liveness probe's command, is not in the httpd image",
		want: []string{`BF501 warning the liveness probe cannot run: its command "pidof"`}, never: notAnOOM},
	{file: "mesos-524-healthy-nginx.txt", cause: "nothing wrong: the liveness probe passes",
		never: []string{"BF501", "BF502"}},
	{file: "openmetadata-startup-probe-message.txt", cause: "the startup probe's budget is too short for MySQL",
		want: []string{"BF501 info the startup probe failed 1 time"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "pires-204-es-data-liveness.txt", cause: "the liveness probe's initialDelaySeconds is too short for Elasticsearch",
		want: []string{"BF501 warning the kubelet killed container es-data 1 time for failing its liveness probe"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "sapcc-64-postgres-recovery-log.txt", cause: "PostgreSQL's crash recovery outlasted the liveness probe (20 s delay, 5 failures): killed before it was ready, again and again",
		want: []string{"BF503 info PostgreSQL recovered from a crash at 1 start"}, never: append(append([]string{"BF501", "BF502"}, notAnOOM...), notNeverStart...)},
	{file: "sitewhere-970-grpc-health-probe-missing.txt", cause: "grpc_health_probe, the liveness probe's command, is not in the image",
		want: []string{`BF501 error the liveness probe cannot run: its command "/bin/grpc_health_probe"`}, never: notAnOOM},
	{file: "starburst-oomkilled-state.txt", cause: "the 300Mi memory limit is too low: OOM kills (500Mi fixed it)",
		want: []string{"BF502 warning exit 137 with reason OOMKilled", "BF501 info 5 restarts, last run 10 s: does not match the liveness probe's"}, never: notTheProbe},
	{file: "trivy-dojo-24-liveness-wrong-path.txt", cause: "the liveness probe's path is wrong on purpose: liveness kills",
		want: []string{"BF501 warning the kubelet killed container trivy-dojo-report-operator 1 time for failing its liveness probe"}, never: append(append([]string{}, notAnOOM...), notNeverStart...)},
	{file: "unleash-194-probe-binary-moved.txt", cause: "the probe's executable moved from /unleash-edge to /app/unleash-edge in the image",
		want: []string{`BF501 warning the liveness probe cannot run: its command "/unleash-edge"`}, never: notAnOOM},
}

func summary(f finding.Finding) string {
	return fmt.Sprintf("%s %s %s", f.Rule, f.Severity, f.Message)
}

func TestRealCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "captures", "*.txt"))
	if len(files) != len(captures) {
		t.Errorf("%d captures in testdata/captures, %d in the table: every capture needs its cause", len(files), len(captures))
	}
	threads := map[string]bool{}
	sources, _ := os.ReadFile(filepath.Join("testdata", "captures", "SOURCES.md"))
	for _, c := range captures {
		t.Run(strings.TrimSuffix(c.file, ".txt"), func(t *testing.T) {
			if !strings.Contains(string(sources), "`"+c.file+"`") {
				t.Errorf("%s is not in SOURCES.md", c.file)
			}
			data, err := os.ReadFile(filepath.Join("testdata", "captures", c.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(Input{Pods: Stream{Name: c.file, Data: data}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) > 0 || len(res.Pods) == 0 {
				t.Fatalf("not read: errors %v, %d pods", res.Errors, len(res.Pods))
			}
			var got []string
			for _, f := range res.Findings {
				if strings.HasPrefix(f.Rule, "BF5") {
					got = append(got, summary(f))
				}
			}
			all := strings.Join(got, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("cause %q: want %q in\n%s", c.cause, w, all)
				}
			}
			for _, n := range c.never {
				for _, g := range got {
					if strings.HasPrefix(g, n) {
						t.Errorf("cause %q: %q contradicts it", c.cause, g)
					}
				}
			}
		})
		threads[threadOf(string(sources), c.file)] = true
	}
	if len(threads) < 20 {
		t.Errorf("captures from %d threads, want at least 20", len(threads))
	}
}

// threadOf finds the thread a capture's SOURCES.md row cites.
func threadOf(sources, file string) string {
	for _, l := range strings.Split(sources, "\n") {
		if strings.Contains(l, "`"+file+"`") {
			if i := strings.Index(l, "https://"); i >= 0 {
				return strings.Fields(l[i:])[0]
			}
		}
	}
	return file
}
