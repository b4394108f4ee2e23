package fixplan

import (
	"encoding/json"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
)

// stage is a destination that takes the findings it is given and hands
// the others on with why.
type stage struct {
	takes   map[int]bool
	why     *Reason
	refuse  *Reason // its claim
	got     [][]int // the findings of each change it was given
	written []int
}

func (s *stage) claim(*object.Object) *Reason { return s.refuse }

func (s *stage) take(_ *object.Object, c fix.Change) (*fix.Change, *Reason) {
	s.got = append(s.got, c.Findings)
	rest := c
	rest.Findings = nil
	for _, i := range c.Findings {
		if s.takes[i] {
			s.written = append(s.written, i)
		} else {
			rest.Findings = append(rest.Findings, i)
		}
	}
	if len(rest.Findings) == 0 {
		return nil, nil
	}
	return &rest, s.why
}

func (s *stage) write(map[string]*File) ([]planned, error)    { return nil, nil }
func (s *stage) verify(*scan.Result, map[string][]byte) error { return nil }

func pipelinePlanner() (*planner, *object.Object) {
	out := &FixPlan{}
	chosen := []finding.Finding{{Rule: "BF101"}, {Rule: "BF102"}, {Rule: "BF103"}}
	o := &object.Object{Doc: &load.Document{File: "chart/templates/db.yaml"}}
	return &planner{out: out, chosen: chosen}, o
}

// Each destination is given what the ones before it left, and what none
// takes is left with the first true reason, not the last one's.
func TestRouteHandsTheRestOn(t *testing.T) {
	p, o := pipelinePlanner()
	values := &stage{takes: map[int]bool{1: true}, why: reason(ReasonUnreached, "the values do not reach the handler")}
	tmpl := &stage{takes: map[int]bool{2: true}, why: reason(ReasonEdit, "written with template actions")}
	p.routeThrough([]destination{values, tmpl}, o, fix.Change{Findings: []int{0, 1, 2}})
	if len(tmpl.got) != 1 || len(tmpl.got[0]) != 2 || tmpl.got[0][0] != 0 || tmpl.got[0][1] != 2 {
		t.Errorf("the template was given %v, want [[0 2]]", tmpl.got)
	}
	if len(p.out.Left) != 1 || p.out.Left[0].Finding.Rule != "BF101" || p.out.Left[0].Type != ReasonUnreached {
		t.Fatalf("left %+v, want BF101 alone, with the first reason", p.out.Left)
	}
}

// A final reason (the values reach the fields, in a file fix does not
// write) ends the route: the template is not tried.
func TestRouteStopsAtAFinalReason(t *testing.T) {
	p, o := pipelinePlanner()
	values := &stage{why: reason(ReasonUnwritable, "values.yaml is read-only")}
	tmpl := &stage{takes: map[int]bool{0: true}}
	p.routeThrough([]destination{values, tmpl}, o, fix.Change{Findings: []int{0}})
	if len(tmpl.got) != 0 {
		t.Errorf("the template was tried after a read-only values file: %v", tmpl.got)
	}
	if len(p.out.Left) != 1 || p.out.Left[0].Type != ReasonUnwritable {
		t.Errorf("left %+v, want the finding left as Unwritable", p.out.Left)
	}
}

// A destination that does not claim the object is passed over; its
// refusal is the reason only when none claims it.
func TestRouteSkipsUnclaimed(t *testing.T) {
	p, o := pipelinePlanner()
	other := &stage{refuse: reason(ReasonOrigin, "not mine")}
	takes := &stage{takes: map[int]bool{0: true}}
	p.routeThrough([]destination{other, takes}, o, fix.Change{Findings: []int{0}})
	if len(other.got) != 0 || len(takes.written) != 1 || len(p.out.Left) != 0 {
		t.Errorf("unclaimed given %v, taken %v, left %+v", other.got, takes.written, p.out.Left)
	}
}

// A template edit changes nothing of its object outside the blocks its
// changes are for, but for the render's noise and what the chart derives
// from the values.
func TestOutsideBlocks(t *testing.T) {
	var before, now any
	_ = json.Unmarshal([]byte(`{"metadata":{"annotations":{"checksum/config":"`+strings.Repeat("a", 64)+`"}},"spec":{"containers":[{"name":"db","image":"db:1","livenessProbe":{"exec":{"command":["x"]}}}]}}`), &before)
	_ = json.Unmarshal([]byte(`{"metadata":{"annotations":{"checksum/config":"`+strings.Repeat("b", 64)+`"}},"spec":{"containers":[{"name":"db","image":"db:1","livenessProbe":{"tcpSocket":{"port":5432}}}]}}`), &now)
	probe := [][]load.Segment{load.SplitPath("spec.containers[0].livenessProbe")}
	if why := outsideBlocks(before, now, probe, "Deployment", nil); why != "" {
		t.Errorf("the probe's own change refused: %s", why)
	}
	_ = json.Unmarshal([]byte(`{"metadata":{"annotations":{"checksum/config":"`+strings.Repeat("b", 64)+`"}},"spec":{"containers":[{"name":"db","image":"db:2","livenessProbe":{"tcpSocket":{"port":5432}}}]}}`), &now)
	if why := outsideBlocks(before, now, probe, "Deployment", nil); !strings.Contains(why, "spec.containers[0].image") {
		t.Errorf("a changed image passes: %q", why)
	}
	if why := outsideBlocks(before, now, probe, "Deployment", map[string]bool{"spec.containers[0].image": true}); why != "" {
		t.Errorf("the render's noise is counted: %s", why)
	}
}
