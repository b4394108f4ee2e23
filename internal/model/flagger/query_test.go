package flagger

import "testing"

func TestSightOfProm(t *testing.T) {
	n := Names{Target: "podinfo", Service: "podinfo", Ingress: "podinfo"}
	for _, c := range []struct {
		q    string
		want Side
	}{
		// Flagger's own queries select the canary.
		{`sum(rate(x{namespace="test",pod=~"podinfo-[0-9a-zA-Z]+(-[0-9a-zA-Z]+)"}[1m]))`, Canary},
		{`sum(rate(istio_requests_total{destination_workload_namespace="test",destination_workload=~"podinfo"}[1m]))`, Canary},
		{`sum(rate(nginx_ingress_controller_requests{namespace="test",ingress="podinfo",canary!=""}[1m]))`, Canary},
		{`sum(rate(http_requests_total{job="podinfo-canary"}[1m]))`, Canary},
		{`sum(rate(x{pod!~"podinfo-primary.*",pod=~"podinfo.*"}[1m]))`, Canary},
		// Both sides, or neither named.
		{`sum(rate(x{pod=~"podinfo-.*"}[1m]))`, Blind},
		{`sum(rate(x{pod=~"podinfo.*"}[1m]))`, Blind},
		{`sum(rate(nginx_ingress_controller_requests{namespace="test",ingress="podinfo"}[1m]))`, Blind},
		{`sum(rate(envoy_cluster_upstream_rq_total{envoy_response_code!~"5.*"}[1m]))`, Blind},
		{`sum(rate(x{namespace="test"}[1m]))`, Blind},
		{`sum(rate(x{deployment="podinfo-primary"}[1m]))`, Blind},
		// A pattern that matches neither sample: not judged.
		{`sum(rate(x{pod=~"podinfo-canary-[a-z0-9]+-[a-z0-9]+"}[1m]))`, Unknown},
	} {
		if got := SightOfProm(c.q, n); got.Side != c.want {
			t.Errorf("%s: got %v (%v), want %v", c.q, got.Side, got.Why, c.want)
		}
	}
}

func TestSightOfText(t *testing.T) {
	n := Names{Target: "podinfo", Service: "podinfo", Ingress: "podinfo"}
	for _, c := range []struct {
		q    string
		want Side
	}{
		{`sum:istio.mesh.request.count{reporter:destination,destination_workload:podinfo}.as_count()`, Canary},
		{`SELECT count(*) FROM Metric WHERE ingress = 'podinfo' AND namespace = 'test'`, Blind},
		{`SELECT count(*) FROM Transaction WHERE appName = 'checkout'`, Blind},
		{`sum:trace.http.request.errors{kube_deployment:podinfo*}`, Blind},
		{`stats.timers.app.podinfo.exception.count`, Unknown},
	} {
		if got := SightOfText(c.q, n); got.Side != c.want {
			t.Errorf("%s: got %v (%v), want %v", c.q, got.Side, got.Why, c.want)
		}
	}
}

func TestRampTimes(t *testing.T) {
	// The istio tutorial: interval 1m, threshold 5, stepWeight 10 to 50.
	r := Ramp{Strategy: "canary", FirstWeight: 10, MaxWeight: 50, Interval: 60, Threshold: 5, Shifts: true}
	ws := []int{10, 20, 30, 40, 50}
	if got := r.HeldAtMax(); got != 360 {
		t.Errorf("held at max %v, want 360: the tick that reaches 50, 5 failed checks, the rollback", got)
	}
	for _, c := range []struct {
		tau  float64
		want int
	}{{300, 50}, {360, 50}, {361, 40}, {420, 40}, {421, 30}, {600, 10}, {601, 0}} {
		if got := r.WeightBefore(ws, c.tau); got != c.want {
			t.Errorf("weight %v s before the rollback: %d, want %d", c.tau, got, c.want)
		}
	}
	if got := r.SinceWeight(ws, 50); got != 360 {
		t.Errorf("since 50%%: %v, want 360", got)
	}
	if got := r.SinceWeight(ws, 40); got != 420 {
		t.Errorf("since 40%%: %v, want 420", got)
	}
}

func TestPrimaryPods(t *testing.T) {
	for _, c := range []struct {
		full, minR, maxR int32
		share            int
		want             int32
	}{
		{8, 1, 8, 50, 4},  // the share's pods
		{8, 1, 8, 75, 6},  // rounded up: 6 of 8 at 25% to the canary
		{4, 2, 4, 45, 2},  // ceil(1.8)
		{4, 3, 4, 50, 3},  // at least minReplicas
		{10, 1, 4, 50, 4}, // at most maxReplicas
		{4, 4, 4, 50, 4},  // pinned: no shrink
	} {
		if got := PrimaryPods(c.full, c.minR, c.maxR, c.share); got != c.want {
			t.Errorf("PrimaryPods(%d, %d, %d, %d%%) = %d, want %d", c.full, c.minR, c.maxR, c.share, got, c.want)
		}
	}
}
