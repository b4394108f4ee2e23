// Command floor is the parse floor of the benchmarks: it reads every .yaml
// file under the given paths and parses each document into a yaml.v3 node,
// one goroutine per file, and drops the node before the next document. No
// scan can report positions for less; hack/bench/run.sh measures it beside
// backfire.
package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

func main() {
	var files []string
	for _, root := range os.Args[1:] {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(2)
		}
	}
	var wg sync.WaitGroup
	docs := make([]int, len(files))
	for i, p := range files {
		wg.Go(func() { docs[i] = parse(p) })
	}
	wg.Wait()
	total := 0
	for _, n := range docs {
		total += n
	}
	fmt.Printf("%d files, %d documents\n", len(files), total)
}

// parse returns the number of documents in the file, or -1 when it could
// not be read.
func parse(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		return -1
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var node yaml.Node
		if err := dec.Decode(&node); err != nil {
			if err != io.EOF {
				fmt.Fprintf(os.Stderr, "floor: %s: %v\n", path, err)
			}
			return n
		}
		n++
	}
}
