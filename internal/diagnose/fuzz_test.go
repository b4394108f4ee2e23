package diagnose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/observe"
)

// FuzzDiagnose runs the whole diagnosis over one pod stream, one events
// stream and one log (the pods as YAML, JSON or kubectl's printed text):
// any input must give findings or errors, never a panic or an internal
// error.
//
//	go test ./internal/diagnose -run '^$' -fuzz FuzzDiagnose -fuzztime 5m
func FuzzDiagnose(f *testing.F) {
	pods, _ := filepath.Glob(filepath.Join("..", "rules", "restarts", "testdata", "*", "*", "*.yaml"))
	ex := filepath.Join("..", "..", "examples", "diagnose")
	events, _ := os.ReadFile(filepath.Join(ex, "events.txt"))
	log, _ := os.ReadFile(filepath.Join(ex, "database.log"))
	printed, _ := filepath.Glob(filepath.Join("testdata", "captures", "*.txt"))
	pods = append(pods, printed...)
	pods = append(pods, filepath.Join(ex, "describe.txt"))
	for _, p := range append(pods, filepath.Join(ex, "pod.txt")) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, events, log[:min(len(log), 4000)])
		}
	}
	f.Fuzz(func(t *testing.T, pod, events, log []byte) {
		res, err := Run(Input{Pods: Stream{Name: "pod", Data: pod}, Events: []Stream{{Name: "events", Data: events}},
			Logs: []observe.Log{{Container: "database", File: "log", Data: log}, {Container: "client", File: "client", Data: log}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Errors {
			if strings.Contains(e.Message, "internal error") {
				t.Fatal(e.Error())
			}
		}
		for _, fd := range res.Findings {
			if fd.Line < 1 || fd.Rule == "" || fd.Message == "" {
				t.Fatalf("bad finding %+v", fd)
			}
		}
	})
}
