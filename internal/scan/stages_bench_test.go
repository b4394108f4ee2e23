package scan

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/rules"
)

// The stages of the scan one at a time, on the 10k corpus, each with its
// input prepared outside the timer: where BenchmarkScan10k's time and
// allocations go.
//
//	go test ./internal/scan -run '^$' -bench Stage -benchmem

type corpusFiles struct {
	names []string
	data  [][]byte
}

func readCorpus(b *testing.B) corpusFiles {
	dir, _ := corpus10k(b)
	names, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	var c corpusFiles
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		c.names = append(c.names, n)
		c.data = append(c.data, data)
	}
	return c
}

func parseCorpus(c corpusFiles) []load.File {
	files := make([]load.File, len(c.names))
	for i := range c.names {
		files[i] = load.Parse(c.names[i], c.data[i])
	}
	return files
}

func decodeCorpus(b *testing.B, files []load.File) []*object.Object {
	var objs []*object.Object
	for _, f := range files {
		for _, d := range f.Documents {
			o, err := object.Decode(d)
			if err != nil {
				b.Fatal(err)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

func ruleOptions(b *testing.B) ([]*rules.Rule, *rules.Options) {
	opts := &rules.Options{Config: &config.Config{}}
	enabled, err := rules.Enabled(catalog.All(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return enabled, opts
}

// BenchmarkStageLoad is yaml.v3 parsing into nodes, conversion to compact
// JSON and the position table, one goroutine (the scan runs one per file).
func BenchmarkStageLoad(b *testing.B) {
	c := readCorpus(b)
	_, n := corpus10k(b)
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		parseCorpus(c)
	}
}

// BenchmarkStageDecode is the typed decoding (k8s.io/api, Argo Rollouts).
func BenchmarkStageDecode(b *testing.B) {
	files := parseCorpus(readCorpus(b))
	b.ReportAllocs()
	for b.Loop() {
		decodeCorpus(b, files)
	}
}

// BenchmarkStageIndex is the cross-object index.
func BenchmarkStageIndex(b *testing.B) {
	objs := decodeCorpus(b, parseCorpus(readCorpus(b)))
	b.ReportAllocs()
	for b.Loop() {
		index.Build(objs)
	}
}

// BenchmarkStageRules is every enabled rule over the index.
func BenchmarkStageRules(b *testing.B) {
	ix := index.Build(decodeCorpus(b, parseCorpus(readCorpus(b))))
	enabled, opts := ruleOptions(b)
	b.ReportAllocs()
	var found int
	for b.Loop() {
		found = len(rules.Run(ix, enabled, opts).Findings)
	}
	b.ReportMetric(float64(found), "findings")
}

// BenchmarkStageReportJSON is writing the JSON report of the 10k scan.
func BenchmarkStageReportJSON(b *testing.B) {
	dir, _ := corpus10k(b)
	res, err := Run(Options{Paths: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := report.JSON(io.Discard, res, report.JSONOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
