// Command table turns the output of hack/bench/run.sh (one hyperfine JSON
// export per input, rss.tsv, load.tsv and same.tsv) into the markdown
// table of docs/benchmarks.md, with the machine's load and the comparison
// of the JSON reports under it, and, with -svg, its chart.
//
//	go run ./hack/bench/table [-svg benchmarks.svg] OUTDIR
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"backfire.dev/backfire/internal/svgplot"
)

// inputs in the order of the table, with the names the table shows.
var inputs = []struct{ key, name string }{
	{"10k", "10k objects (100 files)"},
	{"100k", "100k objects (1,000 files)"},
	{"300k", "300k objects (3,000 files)"},
	{"1m", "1M objects (10,000 files)"},
	{"100mb", "one 100 MB file"},
	{"rich", "rich: 5k Rollout objects, 10 charts, 90 overlays"},
}

// result is what the table uses of one hyperfine result.
type result struct {
	Command string    `json:"command"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	User    float64   `json:"user"`
	System  float64   `json:"system"`
	Times   []float64 `json:"times"`
}

func main() {
	svg := flag.String("svg", "", "write the chart (wall time, x floor) as SVG to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: table [-svg FILE] OUTDIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	rss, err := readRSS(filepath.Join(dir, "rss.tsv"))
	if err != nil {
		fail(err)
	}
	tools := map[string][]float64{} // wall median per input, 0 when not run
	var order []string
	fmt.Println("| input | tool | wall s (median) | min–max s | CPU s | peak RSS MiB | x floor (wall) | x floor (CPU) | x parse (CPU) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for i, in := range inputs {
		results, err := readHyperfine(filepath.Join(dir, in.key+".json"))
		if os.IsNotExist(err) {
			continue // not run (INPUTS)
		}
		if err != nil {
			fail(err)
		}
		// The floor is yaml.v3's parse, parse backfire's own (both CPU
		// seconds are means over the same input's runs).
		floor, floorCPU, parseCPU := 0.0, 0.0, 0.0
		for _, r := range results {
			switch r.Command {
			case "floor":
				floor, floorCPU = r.Median, r.User+r.System
			case "parse":
				parseCPU = r.User + r.System
			}
		}
		for _, r := range results {
			ratio, ratioCPU, ratioParse := "–", "–", "–"
			if floor > 0 {
				ratio = fmt.Sprintf("%.2f", r.Median/floor)
			}
			if floorCPU > 0 {
				ratioCPU = fmt.Sprintf("%.2f", (r.User+r.System)/floorCPU)
			}
			if parseCPU > 0 {
				ratioParse = fmt.Sprintf("%.2f", (r.User+r.System)/parseCPU)
			}
			mib := "–"
			if kb, ok := rss[in.key+"\t"+r.Command]; ok {
				mib = fmt.Sprintf("%.0f", kb/1024)
			}
			fmt.Printf("| %s | %s | %.2f | %.2f–%.2f | %.2f | %s | %s | %s | %s |\n",
				in.name, r.Command, r.Median, r.Min, r.Max, r.User+r.System, mib, ratio, ratioCPU, ratioParse)
			if _, ok := tools[r.Command]; !ok {
				order = append(order, r.Command)
				tools[r.Command] = make([]float64, len(inputs))
			}
			tools[r.Command][i] = r.Median
		}
	}
	if err := printNotes(dir); err != nil {
		fail(err)
	}
	if *svg == "" {
		return
	}
	// One bar per tool and input, grouped by input: a plain bar chart
	// (one stack) of the wall-time medians.
	var cats []string
	var wall []float64
	for i, in := range inputs {
		for _, name := range order {
			if v := tools[name][i]; v > 0 {
				cats = append(cats, in.key+"\n"+name)
				wall = append(wall, v)
			}
		}
	}
	out, err := svgplot.StackedBarsSVG("Whole-process wall time, median of the runs", "seconds",
		24*vg.Centimeter, 10*vg.Centimeter, cats, []svgplot.Stack{{Name: "wall s", Values: wall}})
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*svg, out, 0o644); err != nil {
		fail(err)
	}
}

// printNotes prints, under the table, the load average before each
// input's runs and whether the JSON reports compared were the same.
func printNotes(dir string) error {
	load, err := readTSV(filepath.Join(dir, "load.tsv"))
	if err != nil {
		return err
	}
	same, err := readTSV(filepath.Join(dir, "same.tsv"))
	if err != nil {
		return err
	}
	names := map[string]string{"all": "all cores", "one": "GOMAXPROCS=1", "before": "backfire-before"}
	for _, in := range inputs {
		var notes []string
		for _, l := range load {
			if len(l) == 2 && l[0] == in.key {
				notes = append(notes, "load average before the runs "+l[1])
			}
		}
		for _, l := range same {
			if len(l) == 4 && l[0] == in.key {
				notes = append(notes, fmt.Sprintf("JSON report on %s against %s: %s", names[l[1]], names[l[2]], l[3]))
			}
		}
		if len(notes) > 0 {
			fmt.Printf("\n%s: %s.\n", in.name, strings.Join(notes, "; "))
		}
	}
	return nil
}

// readTSV reads a file of tab-separated lines; a missing file has none.
func readTSV(path string) ([][]string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" {
			out = append(out, strings.Split(l, "\t"))
		}
	}
	return out, nil
}

func readHyperfine(path string) ([]result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct{ Results []result }
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Results, nil
}

// readRSS reads "input<TAB>tool<TAB>KB" lines.
func readRSS(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 3 {
			continue
		}
		kb, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			continue // the run failed before time wrote a number
		}
		out[parts[0]+"\t"+parts[1]] = kb
	}
	return out, sc.Err()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "table:", err)
	os.Exit(1)
}
