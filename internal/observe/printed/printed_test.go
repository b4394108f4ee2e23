package printed

import (
	"strings"
	"testing"
	"time"
)

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in       string
		precise  bool
		d, slack time.Duration
		ok       bool
	}{
		{"57s", false, 57 * time.Second, time.Second, true},
		{"3m2s", true, 3*time.Minute + 2*time.Second, time.Second, true},
		{"3m", true, 3 * time.Minute, time.Second, true},  // HumanDuration prints 3m for 3m0s
		{"3m", false, 3 * time.Minute, time.Minute, true}, // ShortHumanDuration: 3m to 3m59s
		{"4h1m", true, 4*time.Hour + time.Minute, time.Minute, true},
		{"1h", false, time.Hour, time.Hour, true},
		{"5d15h", true, 5*24*time.Hour + 15*time.Hour, time.Hour, true},
		{"10d", true, 10 * 24 * time.Hour, 24 * time.Hour, true},
		{"<unknown>", true, 0, 0, false},
		{"3x", true, 0, 0, false},
		{"1m2s3h", true, 0, 0, false},
	} {
		a, ok := parseAge(tc.in, tc.precise)
		if ok != tc.ok || a.D != tc.d || a.Slack != tc.slack {
			t.Errorf("parseAge(%q, %v) = %v, %v, %v; want %v, %v, %v", tc.in, tc.precise, a.D, a.Slack, ok, tc.d, tc.slack, tc.ok)
		}
	}
}

// A describe pod block as kubectl 1.37 prints it (successThreshold=,
// field paths before event messages since 1.35).
const describe137 = `Name:             web-0
Namespace:        shop
Priority:         0
Node:             worker-1/10.0.0.11
Status:           Running
Controlled By:  StatefulSet/web
Containers:
  web:
    Container ID:   containerd://ab12
    Image:          nginx:1.27
    Image ID:       docker.io/library/nginx@sha256:cd34
    Port:           80/TCP
    Host Port:      0/TCP
    Command:
      nginx
      -g
      daemon off;
    State:          Running
      Started:      Thu, 12 Nov 2026 10:00:00 +0000
    Last State:     Terminated
      Reason:       Error
      Exit Code:    137
      Started:      Thu, 12 Nov 2026 09:58:00 +0000
      Finished:     Thu, 12 Nov 2026 09:59:58 +0000
    Ready:          True
    Restart Count:  3
    Limits:
      memory:  256Mi
    Requests:
      cpu:     100m
      memory:  128Mi
    Liveness:     http-get http://:80/healthz delay=10s timeout=2s period=5s successThreshold=1 failureThreshold=4
    Readiness:    tcp-socket :80 delay=0s timeout=1s period=10s successThreshold=1 failureThreshold=3
    Startup:      grpc <pod>:9090 health delay=0s timeout=1s period=10s successThreshold=1 failureThreshold=30
    Environment:  <none>
    Mounts:       <none>
QoS Class:                   Burstable
Node-Selectors:              disktype=ssd
Tolerations:                 <none>
Events:
  Type     Reason     Age                From     Message
  ----     ------     ----               ----     -------
  Warning  Unhealthy  2m3s (x12 over 9m)  kubelet  spec.containers{web}: Liveness probe failed: HTTP probe failed with statuscode: 500
  Normal   Killing    2m3s (x3 over 8m)  kubelet  spec.containers{web}: Container web failed liveness probe, will be restarted
`

func TestDescribeCurrent(t *testing.T) {
	c := Read("d.txt", []byte(describe137))
	if len(c.Pods) != 1 || c.Pods[0].Name != "web-0" || c.Pods[0].Namespace != "shop" {
		t.Fatalf("pods: %+v", c.Pods)
	}
	p := c.Pods[0]
	if len(p.Containers) != 1 {
		t.Fatalf("containers: %+v", p.Containers)
	}
	ct := p.Containers[0]
	if ct.Name != "web" || !ct.Complete || ct.Image.Value != "nginx:1.27" || ct.RestartCount.Value != "3" {
		t.Errorf("container: %+v", ct)
	}
	if len(ct.Command) != 3 || ct.Command[2].Value != "daemon off;" {
		t.Errorf("command: %+v", ct.Command)
	}
	if ct.LastState.ExitCode.Value != "137" || ct.LastState.Reason.Value != "Error" || ct.LastState.Finished.Line != 24 {
		t.Errorf("last state: %+v", ct.LastState)
	}
	if l := ct.Liveness; l == nil || l.Handler != "http-get" || l.Target != "http://:80/healthz" || l.Delay != 10 || l.Timeout != 2 || l.Period != 5 || l.Success != 1 || l.Failure != 4 || l.Line != 32 {
		t.Errorf("liveness: %+v", l)
	}
	if s := ct.Startup; s == nil || s.Handler != "grpc" || s.Failure != 30 {
		t.Errorf("startup: %+v", s)
	}
	if ct.Limits["memory"].Value != "256Mi" || ct.Requests["cpu"].Value != "100m" {
		t.Errorf("resources: %+v %+v", ct.Limits, ct.Requests)
	}
	if len(p.NodeSelectors) != 1 || p.QoS.Value != "Burstable" {
		t.Errorf("pod fields: %+v %+v", p.NodeSelectors, p.QoS)
	}
	if len(p.Events) != 2 {
		t.Fatalf("events: %+v", p.Events)
	}
	e := p.Events[1]
	if e.Reason != "Killing" || e.Count != 3 || e.FieldPath != "spec.containers{web}" || e.Message != "Container web failed liveness probe, will be restarted" ||
		e.FirstAge.D != 8*time.Minute || e.LastAge.D != 2*time.Minute+3*time.Second {
		t.Errorf("event: %+v", e)
	}
}

// The Events tables of kubectl 1.0 to 1.9, and kubectl get events.
func TestEventTablesOfEveryEra(t *testing.T) {
	for _, tc := range []struct {
		name, in           string
		reason, msg, field string
		count              int
		lastAge            time.Duration
		absolute           bool
		object             string
	}{
		{name: "1.10+ describe, From with the node", in: "Events:\n  Type     Reason   Age               From                Message\n  ----     ------   ----              ----                -------\n  Warning  BackOff  3s (x4 over 40s)  kubelet, minikube  Back-off restarting failed container\n",
			reason: "BackOff", msg: "Back-off restarting failed container", count: 4, lastAge: 3 * time.Second},
		{name: "1.3-1.9 describe, Type column", in: "Events:\n  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubObjectPath\t\tType\t\tReason\t\tMessage\n  ---------\t--------\t-----\t----\t\t\t-------------\t\t--------\t------\t\t-------\n  14m\t\t6m\t\t7\t{kubelet node-2}\tspec.containers{app}\tNormal\t\tKilling\t\tKilling container with docker id 7dc6: pod \"x\" container \"app\" is unhealthy, it will be killed and re-created.\n",
			reason: "Killing", msg: "Killing container with docker id 7dc6: pod \"x\" container \"app\" is unhealthy, it will be killed and re-created.", field: "spec.containers{app}", count: 7, lastAge: 6 * time.Minute},
		{name: "1.5 describe, spaces and 'kubelet, node'", in: "  14m           6m              7       kubelet, f16-7-kubernetes02     spec.containers{livenesstest}   Normal          Killing   Killing container with id docker://livenesstest:pod \"livenesstest_default(ca69)\" container \"livenesstest\" is unhealthy, it will be killed and re-created.\n",
			reason: "Killing", field: "spec.containers{livenesstest}", count: 7, lastAge: 6 * time.Minute,
			msg: "Killing container with id docker://livenesstest:pod \"livenesstest_default(ca69)\" container \"livenesstest\" is unhealthy, it will be killed and re-created."},
		{name: "1.0 describe, RFC 1123 times, no Type", in: "  Mon, 13 Jul 2015 09:18:00 +0000       Mon, 13 Jul 2015 09:18:14 +0000 2       {kubelet 172.28.128.4}  spec.containers{es}          killing         Killing c34a\n",
			reason: "Killing", msg: "Killing c34a", field: "spec.containers{es}", count: 2, absolute: true},
		{name: "get events (server-side table)", in: "LAST SEEN   TYPE      REASON      OBJECT              MESSAGE\n55m         Warning   Unhealthy   pod/redis-master-0   Liveness probe failed: Timed out\n",
			reason: "Unhealthy", msg: "Liveness probe failed: Timed out", count: 1, lastAge: 55 * time.Minute, object: "Pod/redis-master-0"},
		{name: "kubectl events, with the series", in: "LAST SEEN               TYPE      REASON    OBJECT      MESSAGE\n2m (x12 over 40m)       Normal    Killing   Pod/db-0    Container db failed liveness probe, will be restarted\n",
			reason: "Killing", msg: "Container db failed liveness probe, will be restarted", count: 12, lastAge: 2 * time.Minute, object: "Pod/db-0"},
		{name: "get events before 1.11 (LASTSEEN FIRSTSEEN COUNT NAME KIND)", in: "LASTSEEN   FIRSTSEEN   COUNT     NAME      KIND      SUBOBJECT                TYPE      REASON      SOURCE            MESSAGE\n1h         1h          2         web-1     Pod       spec.containers{web}     Warning   Unhealthy   {kubelet ip-1}    Readiness probe failed: \n",
			reason: "Unhealthy", msg: "Readiness probe failed:", field: "spec.containers{web}", count: 2, lastAge: time.Hour, object: "Pod/web-1"},
		{name: "get events -o wide, cut by columns", in: "LAST SEEN   TYPE      REASON    OBJECT    SUBOBJECT              SOURCE            MESSAGE                                                FIRST SEEN   COUNT   NAME\n30s         Normal    Killing   pod/a-0   spec.containers{a}     kubelet, node-1   Container a failed liveness probe, will be restarted   5m           4       a-0.17f\n",
			reason: "Killing", msg: "Container a failed liveness probe, will be restarted", field: "spec.containers{a}", count: 4, lastAge: 30 * time.Second, object: "Pod/a-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Read("e.txt", []byte(tc.in))
			if len(c.Loose) != 1 {
				t.Fatalf("loose events: %+v (pods %+v)", c.Loose, c.Pods)
			}
			e := c.Loose[0]
			if e.Reason != tc.reason || e.Message != tc.msg || e.FieldPath != tc.field || e.Count != tc.count {
				t.Errorf("event: %+v", e)
			}
			if tc.absolute {
				if e.First.IsZero() || e.Last.Sub(e.First) != 14*time.Second {
					t.Errorf("times: %v %v", e.First, e.Last)
				}
			} else if e.LastAge == nil || e.LastAge.D != tc.lastAge {
				t.Errorf("last age: %+v", e.LastAge)
			}
			if got := e.Kind + "/" + e.Name; tc.object != "" && got != tc.object {
				t.Errorf("object %q, want %q", got, tc.object)
			}
		})
	}
}

// A probe's output that spans lines continues the message; a row cut by
// the paste is kept as far as it goes.
func TestWrappedAndTruncatedMessages(t *testing.T) {
	in := "4m41s       Warning   Unhealthy           pod/mysql-0    Startup probe failed: Warning: Using a password on the command line interface can be insecure.\n" +
		"mysqladmin: connect to server at 'localhost' failed\n" +
		"error: 'Can't connect to\n" +
		"4m40s       Normal    Killing             pod/mysql-0    Container mysql failed startup probe, will be rest\n"
	c := Read("w.txt", []byte(in))
	if len(c.Loose) != 2 {
		t.Fatalf("events: %+v", c.Loose)
	}
	if e := c.Loose[0]; e.Wrapped != 2 || !strings.HasSuffix(e.Message, "error: 'Can't connect to") {
		t.Errorf("wrapped: %d %q", e.Wrapped, e.Message)
	}
	if e := c.Loose[1]; e.Reason != "Killing" || !strings.HasSuffix(e.Message, "will be rest") {
		t.Errorf("truncated: %+v", e)
	}
}

func TestGetPodsRows(t *testing.T) {
	in := "NAMESPACE   NAME      READY   STATUS             RESTARTS       AGE   IP           NODE     NOMINATED NODE   READINESS GATES\n" +
		"db          pg-0      0/1     CrashLoopBackOff   42 (57s ago)   3h    10.0.0.5     node-1   <none>           <none>\n" +
		"db          pg-1      1/1     Running            0              3h    10.0.0.6     node-2   <none>           <none>\n" +
		"db          init-1    0/1     Init:CreateContainerConfigError   0   2m   <none>   node-2   <none>   <none>\n"
	c := Read("p.txt", []byte(in))
	if len(c.Pods) != 3 {
		t.Fatalf("pods: %+v", c.Pods)
	}
	r := c.Pods[0].Row
	if c.Pods[0].Namespace != "db" || r.Status != "CrashLoopBackOff" || r.Restarts != 42 || r.LastRestart == nil || r.LastRestart.D != 57*time.Second || r.Age.D != 3*time.Hour {
		t.Errorf("row: %+v", r)
	}
	if c.Pods[2].Row.Status != "Init:CreateContainerConfigError" {
		t.Errorf("init row: %+v", c.Pods[2].Row)
	}
}

// Fragments: a Liveness line alone, the State lines with their
// indentation lost, event messages without their rows.
func TestFragments(t *testing.T) {
	c := Read("f.txt", []byte("Liveness:   exec [sh -c pg_isready -U postgres -h 127.0.0.1] delay=30s timeout=5s\n                  period=10s #success=1 #failure=6\n"))
	if len(c.Pods) != 1 || len(c.Pods[0].Containers) != 1 {
		t.Fatalf("pods: %+v", c.Pods)
	}
	l := c.Pods[0].Containers[0].Liveness
	if l == nil || l.Period != 10 || l.Failure != 6 || l.Delay != 30 {
		t.Errorf("liveness wrapped over two lines: %+v", l)
	}
	if got := execCommand(l.Target); len(got) != 3 || got[2] != "pg_isready -U postgres -h 127.0.0.1" {
		t.Errorf("exec command %q", got)
	}
	c = Read("f.txt", []byte("  Last State:     Terminated\n  Reason:       OOMKilled\n  Exit Code:    137\n"))
	if ls := c.Pods[0].Containers[0].LastState; ls.Reason.Value != "OOMKilled" || ls.ExitCode.Value != "137" {
		t.Errorf("last state: %+v", ls)
	}
	c = Read("f.txt", []byte("ErrImagePull: rpc error: manifest unknown\n(combined from similar events): Liveness probe errored: exec: \"x\": executable file not found in $PATH\n"))
	if len(c.Loose) != 2 || c.Loose[0].Reason != "ErrImagePull" || !c.Loose[1].Timeless || !strings.HasPrefix(c.Loose[1].Message, "Liveness probe errored") {
		t.Errorf("messages: %+v", c.Loose)
	}
}

// Several pods in one file, with the prompts and prose people paste.
func TestSeveralPodsAndProse(t *testing.T) {
	in := "$ kubectl describe pod a-0 b-0\n" + strings.Replace(describe137, "web-0", "a-0", 1) + "\nand the other one:\n\n" + strings.Replace(describe137, "web-0", "b-0", 1)
	c := Read("m.txt", []byte(in))
	if len(c.Pods) != 2 || c.Pods[0].Name != "a-0" || c.Pods[1].Name != "b-0" || len(c.Pods[1].Events) != 2 {
		t.Fatalf("pods: %d %+v", len(c.Pods), c.Pods)
	}
	if c.Skipped == 0 {
		t.Error("the prose is not counted as skipped")
	}
}

func TestObserveBuildsAPodWithWhatWasPrinted(t *testing.T) {
	pods, events, errs := Read("d.txt", []byte(describe137)).Observe()
	if len(errs) > 0 || len(pods) != 1 || len(events) != 2 {
		t.Fatalf("pods %d events %d errs %v", len(pods), len(events), errs)
	}
	p := pods[0]
	c := p.Pod.Spec.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Port.IntValue() != 80 || c.LivenessProbe.FailureThreshold != 4 {
		t.Errorf("liveness: %+v", c.LivenessProbe)
	}
	if !p.Printed.Spec || !p.Knows("spec.containers[0].livenessProbe.periodSeconds") || p.Knows("spec.terminationGracePeriodSeconds") {
		t.Errorf("printed: spec %v fields %v", p.Printed.Spec, p.Printed.Fields())
	}
	if l, _ := p.Line("spec.containers[0].livenessProbe.failureThreshold"); l != 32 {
		t.Errorf("liveness line %d", l)
	}
	st := p.Pod.Status.ContainerStatuses[0]
	if st.RestartCount != 3 || st.LastTerminationState.Terminated.ExitCode != 137 ||
		st.LastTerminationState.Terminated.FinishedAt.Sub(st.LastTerminationState.Terminated.StartedAt.Time) != 118*time.Second {
		t.Errorf("status: %+v", st)
	}
	if e := events[1]; !e.Ago || e.Container != "web" || e.Last.Sub(e.First) != 5*time.Minute+57*time.Second || e.LastAge != "2m3s" {
		t.Errorf("event: %+v", e)
	}
}

// A line of kubectl output that does not hold a number where one belongs
// is an error at its line; the rest is still read.
func TestBadNumbersAreErrorsAtTheirLine(t *testing.T) {
	in := strings.Replace(describe137, "Restart Count:  3", "Restart Count:  three", 1)
	pods, _, errs := Read("d.txt", []byte(in)).Observe()
	if len(errs) != 1 || errs[0].Line != 26 || !strings.Contains(errs[0].Message, "Restart Count") {
		t.Fatalf("errors: %v", errs)
	}
	if len(pods) != 1 || pods[0].Knows("status.containerStatuses[0].restartCount") || pods[0].Pod.Spec.Containers[0].LivenessProbe == nil {
		t.Errorf("the rest is not read: %+v", pods)
	}
}

func TestNotKubectlOutput(t *testing.T) {
	for _, in := range []string{"", "hello world\nthis is prose\n", "apiVersion: v1\nkind: Pod\n", "\x00\xff\xfe"} {
		if c := Read("x", []byte(in)); len(c.Pods) != 0 || len(c.Loose) != 0 {
			t.Errorf("%q read as %+v", in, c)
		}
	}
}

// A paste that lost the Limits and Requests lines disagrees with its own
// QoS Class: the static rules must not read the spec as having none.
func TestQoSClassGuardsTheSpec(t *testing.T) {
	in := strings.Replace(describe137, "    Limits:\n      memory:  256Mi\n    Requests:\n      cpu:     100m\n      memory:  128Mi\n", "", 1)
	pods, _, _ := Read("d.txt", []byte(in)).Observe()
	if len(pods) != 1 || pods[0].Printed.Spec || !strings.Contains(strings.Join(pods[0].Printed.Lacks, " "), "QoS Class Burstable") {
		t.Errorf("spec %v, lacks %v", pods[0].Printed.Spec, pods[0].Printed.Lacks)
	}
}

// A kubelet message quoted in prose is read; prose that only names a
// probe is not.
func TestInlineEventMessages(t *testing.T) {
	c := Read("p.txt", []byte("Kubernetes reports Liveness probe failed: command \"curl -f http://localhost/\" timed out\n"+
		"I see `Container web failed liveness probe, will be restarted` every minute\n"+
		"the liveness probe failed again, any idea?\n"))
	if len(c.Loose) != 2 || c.Loose[0].Reason != "Unhealthy" || c.Loose[1].Reason != "Killing" ||
		c.Loose[1].Message != "Container web failed liveness probe, will be restarted" {
		t.Fatalf("loose %+v", c.Loose)
	}
}
