package controllers

import "testing"

// The interval is the shortest gap between runs, read as the CronJob
// controller parses schedules; runs per day count the one at midnight.
func TestScheduleInterval(t *testing.T) {
	for _, c := range []struct {
		schedule         string
		interval, perDay int
	}{
		{"*/5 * * * *", 300, 288},
		{"0 * * * *", 3600, 24},
		{"0 0 * * *", 86400, 1},
		{"@daily", 86400, 1},
		{"0 2 * * 1-5", 86400, 1}, // Monday to Friday; the reference day is a Monday
		{"*/15 9-17 * * *", 900, 36},
		{"0 0 1 * *", 28 * 86400, 0}, // monthly: the shortest gap is February's
	} {
		s, err := parseSchedule(c.schedule)
		if err != nil {
			t.Fatalf("%s: %v", c.schedule, err)
		}
		if i, d := intervalOf(s); i != c.interval || d != c.perDay {
			t.Errorf("%s: interval %d s, %d a day; want %d s, %d", c.schedule, i, d, c.interval, c.perDay)
		}
	}
	if _, err := parseSchedule("61 * * * *"); err == nil {
		t.Error("a minute of 61 parsed")
	}
	if got := backoffSeconds(6); got != 630 {
		t.Errorf("back-off of 6 retries: %d s, want 10+20+40+80+160+320 = 630", got)
	}
}
