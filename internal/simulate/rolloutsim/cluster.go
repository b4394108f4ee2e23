package rolloutsim

import (
	"math"
	"math/rand/v2"
	"time"

	"backfire.dev/backfire/internal/model/rollout/twin"
)

// pod is one pod of a ReplicaSet as the kubelet and the endpoints
// controller see it.
type pod struct {
	// up is when the application inside starts answering: creation plus the
	// start-up time.
	up time.Duration
	// nextProbe is when the readiness probe runs next.
	nextProbe time.Duration
	ready     bool
	// successes and failures count consecutive probe results.
	successes, failures int32
	// load is the rps the pod received in the last second.
	load float64
}

// replicaSet keeps the pods behind one of the twin's ReplicaSets.
type replicaSet struct {
	rs   *twin.ReplicaSet
	pods []*pod
}

// cluster plays the ReplicaSet controller, the kubelet's readiness probes
// and the endpoints controller around the twin.
type cluster struct {
	in  *Input
	rng *rand.Rand
	rss map[string]*replicaSet
}

func newCluster(in *Input) *cluster {
	return &cluster{in: in, rng: rand.New(rand.NewPCG(uint64(in.Seed), 0x6261636b66697265)), rss: map[string]*replicaSet{}}
}

func (c *cluster) startUp() time.Duration {
	lo, hi := c.in.PodStart[0], c.in.PodStart[1]
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(c.rng.Int64N(int64(hi-lo)+1))
}

// never is a start-up time that does not end: a pod that stays down.
const never = time.Duration(math.MaxInt64)

// adopt gives a ReplicaSet that exists at the start its pods, Ready but
// for the last down ones, which never come up.
func (c *cluster) adopt(rs *twin.ReplicaSet, down int32) {
	r := &replicaSet{rs: rs}
	for i := range rs.Replicas {
		p := &pod{ready: true, successes: c.in.Probe.SuccessThreshold, nextProbe: c.phase()}
		if i >= rs.Replicas-down {
			p.up, p.ready, p.successes = never, false, 0
		}
		r.pods = append(r.pods, p)
	}
	c.rss[rs.Revision] = r
	c.status(r)
}

// adoptLive gives a ReplicaSet read from a cluster its pods: Available of
// them Ready, the rest not Ready, either staying down or starting now.
func (c *cluster) adoptLive(rs *twin.ReplicaSet, stayDown bool) {
	r := &replicaSet{rs: rs}
	for i := range rs.Pods {
		p := &pod{ready: true, successes: c.in.Probe.SuccessThreshold, nextProbe: c.phase()}
		if i >= rs.Available {
			p.ready, p.successes = false, 0
			p.up = c.startUp()
			p.nextProbe = p.up + c.in.Probe.InitialDelay
			if stayDown {
				p.up = never
			}
		}
		r.pods = append(r.pods, p)
	}
	c.rss[rs.Revision] = r
	c.status(r)
}

// phase spreads the probes of pods that were already running.
func (c *cluster) phase() time.Duration {
	return time.Duration(c.rng.Int64N(int64(c.in.Probe.Period)))
}

// sync is the ReplicaSet controller: pods created or deleted to match
// spec.replicas (the newest deleted first), then status written.
func (c *cluster) sync(cl *twin.Cluster, now time.Duration) {
	for _, rs := range cl.ReplicaSets {
		r := c.rss[rs.Revision]
		if r == nil {
			r = &replicaSet{rs: rs}
			c.rss[rs.Revision] = r
		}
		for int32(len(r.pods)) < rs.Replicas {
			up := now + c.startUp()
			r.pods = append(r.pods, &pod{up: up, nextProbe: up + c.in.Probe.InitialDelay})
		}
		if int32(len(r.pods)) > rs.Replicas {
			r.pods = r.pods[:rs.Replicas]
		}
		c.status(r)
	}
}

// status writes status.replicas and status.availableReplicas (Ready, as
// minReadySeconds is 0).
func (c *cluster) status(r *replicaSet) {
	r.rs.Pods = int32(len(r.pods))
	r.rs.Available = r.ready()
}

func (r *replicaSet) ready() int32 {
	var n int32
	for _, p := range r.pods {
		if p.ready {
			n++
		}
	}
	return n
}

// probe runs every readiness probe due at now. A probe fails when the
// application is not up yet, or when the pod's load is over its capacity:
// the handler then answers slower than timeoutSeconds.
func (c *cluster) probe(now time.Duration) {
	pr := c.in.Probe
	for _, r := range c.rss {
		for _, p := range r.pods {
			for p.nextProbe <= now {
				ok := now >= p.up && p.load <= c.in.PodCapacity
				if ok {
					p.successes++
					p.failures = 0
					if p.successes >= pr.SuccessThreshold {
						p.ready = true
					}
				} else {
					p.failures++
					p.successes = 0
					if p.failures >= pr.FailureThreshold {
						p.ready = false
					}
				}
				p.nextProbe += pr.Period
			}
		}
		c.status(r)
	}
}

// Failures are failed requests (per second, or summed) by cause.
type Failures struct {
	// BrokenVersion: answered with an error by the version rolled back
	// from (--broken-error-rate of what it serves).
	BrokenVersion float64 `json:"brokenVersion"`
	// TooFewReady: more than the Ready pods of the side they were sent to
	// can serve (--pod-capacity each); their readiness probes then fail
	// under the load, which takes them out and makes it worse.
	TooFewReady float64 `json:"tooFewReady"`
	// NoEndpoint: sent to a Service with no Ready endpoint at all.
	NoEndpoint float64 `json:"noEndpoint"`
}

// Total is every failed request.
func (f Failures) Total() float64 { return f.BrokenVersion + f.TooFewReady + f.NoEndpoint }

func (f Failures) plus(g Failures) Failures {
	return Failures{f.BrokenVersion + g.BrokenVersion, f.TooFewReady + g.TooFewReady, f.NoEndpoint + g.NoEndpoint}
}

func (f Failures) times(k float64) Failures {
	return Failures{f.BrokenVersion * k, f.TooFewReady * k, f.NoEndpoint * k}
}

// side is one destination of the traffic split.
type side struct {
	offered, served float64
	failed          Failures
	ready           int32
}

// serve splits one second of traffic by weight over the Ready endpoints
// of the Service each side goes to. A side with no Ready endpoint fails all
// it is offered; a side over capacity serves capacity and fails the rest;
// a broken version fails its error rate of what it serves.
func (c *cluster) serve(revision string, rps float64, broken string) side {
	s := side{offered: rps}
	r := c.rss[revision]
	var ready []*pod
	if r != nil {
		for _, p := range r.pods {
			if p.ready {
				ready = append(ready, p)
			}
		}
	}
	s.ready = int32(len(ready))
	if len(ready) == 0 {
		s.failed.NoEndpoint = rps
		return s
	}
	per := rps / float64(len(ready))
	for _, p := range ready {
		p.load = per
	}
	s.served = min(rps, c.in.PodCapacity*float64(len(ready)))
	s.failed.TooFewReady = rps - s.served
	if revision == broken && c.in.BrokenErrorRate > 0 {
		bad := s.served * c.in.BrokenErrorRate
		s.served -= bad
		s.failed.BrokenVersion = bad
	}
	return s
}

// idle clears the load of every pod before a second of traffic.
func (c *cluster) idle() {
	for _, r := range c.rss {
		for _, p := range r.pods {
			p.load = 0
		}
	}
}

func (c *cluster) readyOf(revision string) int32 {
	if r := c.rss[revision]; r != nil {
		return r.ready()
	}
	return 0
}
