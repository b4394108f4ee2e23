package controllers

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/rules"
)

// BF802: a CronJob that forbids a second concurrent run and puts no
// deadline on a run. The controller skips every schedule while a Job of it
// is active, and a Job whose pod hangs, or stays Pending, stays active.
var BF802 = rules.Register(&rules.Rule{
	ID:       "BF802",
	Slug:     "cronjob-forbid-without-deadline",
	Severity: finding.Warning,
	Summary:  "A CronJob forbids concurrent runs but puts no deadline on a run: one run that hangs skips every later one, quietly, until someone deletes its Job.",
	Kinds:    []string{"CronJob"},
	Evidence: []any{BF802Evidence{}},
	Fix:      rules.FixFields{Sets: []string{"spec.jobTemplate.spec.activeDeadlineSeconds"}, From: []string{"spec.schedule", "spec.jobTemplate.spec.activeDeadlineSeconds"}},
	Check:    &rules.Scan{Run: runBF802},
})

const (
	// deadlineIntervals: a run may take this many intervals before the
	// rule calls its deadline too long (it then skips at least one run).
	deadlineIntervals = 2
	// fixShare of the interval is the deadline the fix proposes: a hung
	// run ends before the next start is due.
	fixShare = 0.9
	// The Job controller's default backoffLimit, and its back-off between
	// failed pods: 10 s doubling to 10 min (pkg/controller/job,
	// DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff).
	defaultBackoffLimit = 6
	podBackoffInitial   = 10
	podBackoffMax       = 600
)

// reference is when schedules are walked from: a fixed time, so that the
// same schedule always gives the same interval.
var reference = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

func runBF802(p *rules.Pass) {
	cj, ok := p.Object.Typed.(*batchv1.CronJob)
	if !ok || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		return
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return // no run starts: nothing to skip
	}
	sched, err := parseSchedule(cj.Spec.Schedule)
	if err != nil {
		return // the API server rejects it: the CronJob never runs
	}
	interval, perDay := intervalOf(sched)
	if interval <= 0 {
		return
	}
	job := cj.Spec.JobTemplate.Spec
	deadline := job.ActiveDeadlineSeconds
	if deadline != nil && *deadline <= int64(deadlineIntervals*interval) {
		return
	}
	backoff := int32(defaultBackoffLimit)
	if job.BackoffLimit != nil {
		backoff = *job.BackoffLimit
	}
	podDeadline := job.Template.Spec.ActiveDeadlineSeconds
	// With only a pod deadline, each pod that runs too long fails and the
	// Job ends after backoffLimit retries; a pod never scheduled is not
	// bounded (the kubelet enforces that deadline). Bounded soon enough, that is worth knowing, no more.
	pendingOnly := false
	var podBound int
	if deadline == nil && podDeadline != nil {
		podBound = int(backoff+1)*int(*podDeadline) + backoffSeconds(backoff)
		pendingOnly = podBound <= deadlineIntervals*interval
	}

	every := describeInterval(interval)
	ev := BF802Evidence{
		Schedule: cj.Spec.Schedule, IntervalSeconds: interval, RunsPerDay: perDay,
		ActiveDeadlineSeconds: deadline, PodActiveDeadlineSeconds: podDeadline,
		BackoffLimit: backoff, StartingDeadlineSeconds: cj.Spec.StartingDeadlineSeconds,
	}
	var msg string
	sev := finding.None
	path := field.NewPath("spec", "concurrencyPolicy")
	switch {
	case pendingOnly:
		sev = finding.Info
		msg = fmt.Sprintf("concurrencyPolicy Forbid and a deadline on the pod only (activeDeadlineSeconds %d): a run that hangs ends within %d s, but one whose pod is never scheduled (no node fits it) keeps its Job active for good, and every later run of %q is skipped",
			*podDeadline, podBound, cj.Spec.Schedule)
	case deadline != nil:
		lost := int(*deadline) / interval
		msg = fmt.Sprintf("concurrencyPolicy Forbid, and a run may last activeDeadlineSeconds %d, %d times the %s interval of %q: one run that hangs skips the %d runs due before its deadline ends it",
			*deadline, lost, every, cj.Spec.Schedule, lost)
	default:
		msg = fmt.Sprintf("concurrencyPolicy Forbid and no activeDeadlineSeconds on the Job: one run that hangs keeps its Job active for good, and every later run of %q (%s, %d a day) is skipped until someone deletes that Job",
			cj.Spec.Schedule, every, perDay)
	}
	mech := []string{
		"The CronJob controller starts a run only if no Job of this CronJob is active: with concurrencyPolicy Forbid, each schedule that finds one still active is skipped, with nothing but a Normal event, JobAlreadyActive (no Warning, no failed condition).",
		fmt.Sprintf("A Job stays active until it succeeds, fails or passes its activeDeadlineSeconds. backoffLimit (%d) ends only a Job whose pods fail: a pod that hangs (a lock wait, a stalled network call, a process that never exits) never fails, and neither does one that stays Pending (unschedulable, ImagePullBackOff).", backoff),
	}
	switch {
	case deadline != nil:
		mech = append(mech, fmt.Sprintf("activeDeadlineSeconds %d ends a hung run, but only after %d s: %d x %d s = %d runs of this schedule are skipped first.",
			*deadline, *deadline, int(*deadline)/interval, interval, int(*deadline)/interval))
	case podDeadline != nil:
		mech = append(mech, fmt.Sprintf("The pod template's activeDeadlineSeconds %d fails a pod that runs too long, so a run that hangs ends after at most %d tries: %d x %d s plus %d s of back-off = %d s (%s); the kubelet enforces that deadline from the pod's start time, so a pod no node accepts (Pending, unschedulable) has none and is never ended by it.",
			*podDeadline, backoff+1, backoff+1, *podDeadline, backoffSeconds(backoff), podBound, runsIn(podBound, interval)))
	default:
		mech = append(mech, fmt.Sprintf("Nothing bounds a run: a run that hangs at one start skips every following one, %d a day (%s); the CronJob looks healthy (its status.lastScheduleTime simply stops moving).", perDay, every))
	}
	mech = append(mech,
		"The \"more than 100 missed start times\" rule some linters cite (and startingDeadlineSeconds as its cure) is the old CronJob controller's, replaced by default in Kubernetes 1.21: the current controller records a Warning, TooManyMissedTimes, and still starts the most recent missed run once nothing is active; startingDeadlineSeconds only decides whether that late run may still start.")
	fixDeadline := int64(float64(interval) * fixShare)
	p.Report(rules.Report{
		Severity:  sev,
		Path:      path,
		Message:   msg,
		Mechanism: mech,
		Evidence:  ev,
		Fix: &finding.Fix{
			Description: fmt.Sprintf("Give the Job activeDeadlineSeconds %d (%d%% of the %d s interval): a run that hangs is ended (reason DeadlineExceeded) before the next one is due, so at most one run is lost. If a normal run takes longer than that, runs already overlap the schedule and Forbid skips them: lengthen the schedule instead. A job that is safe to restart can use concurrencyPolicy Replace, which deletes the running Job at the next start.",
				fixDeadline, int(fixShare*100), interval),
			Type:  finding.StrategicMergePatch,
			Patch: fix.At("spec.jobTemplate.spec", map[string]any{"activeDeadlineSeconds": fixDeadline}),
		},
	})
}

// parseSchedule reads a schedule as the CronJob controller does: standard
// cron with the @ descriptors (robfig/cron ParseStandard, which
// pkg/util/parsers.ParseCronScheduleWithPanicRecovery calls), a TZ= or
// CRON_TZ= prefix allowed.
func parseSchedule(s string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule %q: %v", s, r)
		}
	}()
	return cron.ParseStandard(strings.TrimSpace(s))
}

// intervalOf is the shortest gap between two runs over the four weeks after
// the reference time, in seconds, and the runs in the first day.
func intervalOf(s cron.Schedule) (interval, perDay int) {
	t := s.Next(reference.Add(-time.Second)) // a run at the reference time counts
	end := reference.Add(28 * 24 * time.Hour)
	day := reference.Add(24 * time.Hour)
	shortest := time.Duration(0)
	for n := 0; n < 100000 && !t.IsZero() && t.Before(end); n++ {
		if t.Before(day) {
			perDay++
		}
		next := s.Next(t)
		if next.IsZero() {
			break
		}
		if gap := next.Sub(t); shortest == 0 || gap < shortest {
			shortest = gap
		}
		t = next
	}
	if shortest == 0 {
		// At most one run in four weeks (a yearly schedule): the gap to the
		// next one is the interval.
		if first := s.Next(reference); !first.IsZero() {
			if second := s.Next(first); !second.IsZero() {
				shortest = second.Sub(first)
			}
		}
	}
	return int(shortest / time.Second), perDay
}

// backoffSeconds is the Job controller's back-off between the retries of
// backoffLimit failed pods: 10 s doubling, at most 10 min each.
func backoffSeconds(limit int32) int {
	total, d := 0, podBackoffInitial
	for range limit {
		total += d
		d = min(2*d, podBackoffMax)
	}
	return total
}

// runsIn says how many runs of the schedule fall in d seconds.
func runsIn(d, interval int) string {
	if n := d / interval; n > 0 {
		return fmt.Sprintf("%d runs of this schedule", n)
	}
	return fmt.Sprintf("less than the %d s interval", interval)
}

// describeInterval says an interval the way a schedule is read: "hourly",
// "every 5 min".
func describeInterval(s int) string {
	switch {
	case s == 60:
		return "every minute"
	case s == 3600:
		return "hourly"
	case s == 86400:
		return "daily"
	case s == 7*86400:
		return "weekly"
	case s%86400 == 0:
		return fmt.Sprintf("every %d days", s/86400)
	case s%3600 == 0:
		return fmt.Sprintf("every %d h", s/3600)
	case s%60 == 0:
		return fmt.Sprintf("every %d min", s/60)
	}
	return fmt.Sprintf("every %d s", s)
}
