package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// objectKey finds the object a finding is about: the file it names (for a
// chart, the template under "# Source:"), its kind and its name.
type objectKey struct{ file, kind, name string }

// indexDocs decodes YAML documents into maps, by file, kind and name.
// Documents that do not decode are left out: the scan reports them.
func indexDocs(into map[objectKey]map[string]any, file string, text []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) || err != nil && !strings.Contains(err.Error(), "cannot unmarshal") {
			return
		}
		if doc == nil {
			continue
		}
		kind, _ := doc["kind"].(string)
		meta, _ := doc["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if kind != "" && name != "" {
			into[objectKey{file, kind, name}] = doc
		}
	}
}

// indexDir indexes every YAML file under dir by its path relative to dir.
func indexDir(dir string) map[objectKey]map[string]any {
	idx := map[objectKey]map[string]any{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		indexDocs(idx, filepath.ToSlash(rel), b)
		return nil
	})
	return idx
}

// indexHelmOutput indexes `helm template` output by each document's source.
func indexHelmOutput(out []byte) map[objectKey]map[string]any {
	idx := map[objectKey]map[string]any{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		_, rest, ok := strings.Cut(doc, "# Source: ")
		if !ok {
			continue
		}
		src, body, _ := strings.Cut(rest, "\n")
		indexDocs(idx, src, []byte(body))
	}
	return idx
}

func get(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, _ := m[p].(map[string]any)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

func podSpec(obj map[string]any) map[string]any {
	switch obj["kind"] {
	case "Pod":
		return get(obj, "spec")
	case "CronJob":
		return get(obj, "spec", "jobTemplate", "spec", "template", "spec")
	}
	return get(obj, "spec", "template", "spec")
}

func containers(spec map[string]any) []map[string]any {
	var out []map[string]any
	for _, key := range []string{"containers", "initContainers"} {
		list, _ := spec[key].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// num reads an integer field with its Kubernetes default.
func num(m map[string]any, key string, def int) int {
	if v, ok := m[key].(int); ok {
		return v
	}
	return def
}

// recompute checks a finding's numbers against the object it is about:
// BF101's kill time and recovery budget, BF102's timeout, BF201's absent
// resources, BF202's cpu limit. Other rules are not checked ("-").
func recompute(f finding, obj map[string]any) string {
	spec := podSpec(obj)
	if spec == nil {
		return "MISMATCH no pod spec"
	}
	var c map[string]any
	for _, cc := range containers(spec) {
		if f.Container != nil && cc["name"] == *f.Container {
			c = cc
		}
	}
	switch f.Rule {
	case "BF101", "BF102":
		lp := get(c, "livenessProbe")
		if lp == nil {
			return "MISMATCH no livenessProbe"
		}
		d, p, fail, t := num(lp, "initialDelaySeconds", 0), num(lp, "periodSeconds", 10), num(lp, "failureThreshold", 3), num(lp, "timeoutSeconds", 1)
		if f.Rule == "BF102" {
			if t != 1 {
				return fmt.Sprintf("MISMATCH timeoutSeconds %d", t)
			}
			return "ok timeoutSeconds 1"
		}
		kill, budget := (fail-1)*p+t, d+fail*p
		if sp := get(c, "startupProbe"); sp != nil && f.Evidence["startupBudgetSeconds"] != nil && f.Evidence["neverHealthyKillSeconds"] == f.Evidence["startupBudgetSeconds"] {
			budget = num(sp, "initialDelaySeconds", 0) + num(sp, "failureThreshold", 3)*num(sp, "periodSeconds", 10)
		}
		got := fmt.Sprintf("%v/%v", f.Evidence["timeToKillSeconds"], f.Evidence["neverHealthyKillSeconds"])
		if want := fmt.Sprintf("%d/%d", kill, budget); got != want {
			return fmt.Sprintf("MISMATCH kill/budget %s, recomputed %s", got, want)
		}
		return "ok kill/budget " + got
	case "BF201":
		for _, cc := range containers(spec) {
			res := get(cc, "resources")
			for _, kind := range []string{"limits", "requests"} {
				for _, r := range []string{"cpu", "memory"} {
					if get(res, kind) != nil && get(res, kind)[r] != nil {
						return fmt.Sprintf("MISMATCH container %v sets %s.%s", cc["name"], kind, r)
					}
				}
			}
		}
		return "ok no cpu or memory anywhere"
	case "BF202":
		if lim := get(c, "resources", "limits"); lim != nil && lim["cpu"] != nil {
			return fmt.Sprintf("ok cpu limit %v", lim["cpu"])
		}
		return "MISMATCH no cpu limit"
	}
	return "-"
}
