package probesim

// ReadyStats sums a run's Ready condition: how long and how often the
// container was out of rotation, and how long each kill kept it out.
type ReadyStats struct {
	// NotReadySeconds is the time not ready, the start's wait for the
	// first ready included.
	NotReadySeconds float64
	// Episodes counts the stretches not ready, the first (from the start)
	// included; LongestSeconds is the longest.
	Episodes       int
	LongestSeconds float64
	// FirstReady is when the container was first ready; -1 if never.
	FirstReady float64
	// KillToReady is, for each kill, the time until the container was
	// ready again; -1 when it was not before the next kill or the end.
	KillToReady []float64
}

// ReadyStats reads the run's Ready condition (Timeline.Condition): not
// ready from 0 until its first change.
func (tl Timeline) ReadyStats() ReadyStats {
	st := ReadyStats{FirstReady: -1}
	ready, from := false, 0.0 // the condition since from
	episode := func(to float64) {
		if to > from {
			st.NotReadySeconds += to - from
			st.LongestSeconds = max(st.LongestSeconds, to-from)
			st.Episodes++
		}
	}
	for _, c := range tl.Condition {
		if c.At >= tl.Duration {
			break
		}
		if c.Ready == ready {
			continue
		}
		if c.Ready {
			episode(c.At)
			if st.FirstReady < 0 {
				st.FirstReady = c.At
			}
		}
		ready, from = c.Ready, c.At
	}
	if !ready {
		episode(tl.Duration)
	}
	j := 0 // both lists are in time order
	for i, k := range tl.Kills {
		until := tl.Duration
		if i+1 < len(tl.Kills) {
			until = tl.Kills[i+1].At
		}
		for j < len(tl.Condition) && !(tl.Condition[j].Ready && tl.Condition[j].At > k.At) {
			j++
		}
		back := -1.0
		if j < len(tl.Condition) && tl.Condition[j].At < until {
			back = tl.Condition[j].At - k.At
		}
		st.KillToReady = append(st.KillToReady, back)
	}
	return st
}
