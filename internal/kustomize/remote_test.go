package kustomize_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\n"

// A kustomization's remote resources are not fetched: the build is an
// error naming the entry, at its line, and the server named gets no
// request (kustomize would GET any URL a resource names, and run git for
// a repository). With AllowRemote, the build fetches it, as kubectl does.
func TestRemoteResourcesAreRefusedUnlessAllowed(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(configMap))
	}))
	defer srv.Close()
	for _, c := range []struct {
		name, kustomization, want string
		line                      int
	}{
		{"url", "resources:\n- local.yaml\n- " + srv.URL + "/cm.yaml\n", `"` + srv.URL + `/cm.yaml" is remote: kustomize would fetch it with an HTTP GET`, 3},
		{"github", "resources:\n- github.com/kubernetes-sigs/kustomize/examples/helloWorld?ref=v3.3.1\n", "would clone it with git", 2},
		{"ssh", "bases:\n- git@github.com:org/repo.git//base\n", "would clone it with git", 2},
		{"component", "components:\n- https://example.com/org/repo.git//component\n", "is remote", 2},
		{"patch", "resources:\n- local.yaml\npatches:\n- path: " + srv.URL + "/p.yaml\n", "fetch it with an HTTP GET", 4},
		{"generator files", "configMapGenerator:\n- name: c\n  files:\n  - k=" + srv.URL + "/f\n", "fetch it with an HTTP GET", 4},
		{"transformer", "resources:\n- local.yaml\ntransformers:\n- |-\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {name: p}\n  path: " + srv.URL + "/p.yaml\n", "is remote", 4},
		{"in a base", "resources:\n- base\n", `"` + srv.URL + `/cm.yaml" is remote`, 2},
	} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			"kustomization.yaml":      c.kustomization,
			"local.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local}\n",
			"base/kustomization.yaml": "resources:\n- " + srv.URL + "/cm.yaml\n",
		})
		streams, errs := kustomize.New().Render(source.Input{Path: dir, Kind: source.Kustomization})
		if len(streams) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Message, c.want) || !strings.Contains(errs[0].Message, "--allow-remote-resources") {
			t.Errorf("%s: %d streams, errors %v", c.name, len(streams), errs)
			continue
		}
		file := "kustomization.yaml"
		if c.name == "in a base" {
			file = "base/kustomization.yaml"
		}
		if errs[0].File != filepath.Join(dir, file) || errs[0].Line != c.line {
			t.Errorf("%s: error at %s:%d, want %s:%d", c.name, errs[0].File, errs[0].Line, file, c.line)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server got %d requests", n)
	}
	// A literal that looks like a URL is a value, not a file.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"kustomization.yaml": "configMapGenerator:\n- name: c\n  literals:\n  - url=https://example.com/x\n"})
	if _, errs := kustomize.New().Render(source.Input{Path: dir, Kind: source.Kustomization}); len(errs) > 0 {
		t.Errorf("literal: %v", errs)
	}
	// Allowed, the resource is fetched.
	dir = t.TempDir()
	writeFiles(t, dir, map[string]string{"kustomization.yaml": "resources:\n- " + srv.URL + "/cm.yaml\n"})
	streams, errs := kustomize.New().AllowRemote().Render(source.Input{Path: dir, Kind: source.Kustomization})
	if len(errs) > 0 || len(streams) != 1 || !strings.Contains(string(streams[0].Data), "name: fetched") || hits.Load() != 1 {
		t.Errorf("allowed: %d streams, errors %v, %d requests", len(streams), errs, hits.Load())
	}
}

// A named pipe as the kustomization file, or named in its resources, is
// an error: reading it would wait forever for a writer.
func TestPipesInAKustomizationAreErrors(t *testing.T) {
	for _, name := range []string{"kustomization.yaml", "pipe.yaml"} {
		dir := t.TempDir()
		if name != "kustomization.yaml" {
			writeFiles(t, dir, map[string]string{"kustomization.yaml": "resources:\n- pipe.yaml\n"})
		}
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Skip("no named pipes:", err)
		}
		done := make(chan []string)
		go func() {
			_, errs := kustomize.New().Render(source.Input{Path: dir, Kind: source.Kustomization})
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			done <- msgs
		}()
		select {
		case msgs := <-done:
			if len(msgs) != 1 || !strings.Contains(msgs[0], "not a regular file (a named pipe)") {
				t.Errorf("%s: %v", name, msgs)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the build still waits on the pipe", name)
		}
	}
}

// Each object of a build is a stream of its own bytes that knows the line
// it starts on in the build's output: the streams hold the output once
// (they held, padded with the lines before them, memory quadratic in the
// objects), and a document parsed from one has the output's lines.
func TestBuildStreamsHoldTheOutputOnce(t *testing.T) {
	dir := t.TempDir()
	var k, res strings.Builder
	k.WriteString("resources:\n- all.yaml\n")
	for i := range 200 {
		fmt.Fprintf(&res, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%03d\ndata:\n  k: v\n", i)
	}
	writeFiles(t, dir, map[string]string{"kustomization.yaml": k.String(), "all.yaml": res.String()})
	streams, errs := kustomize.New().Render(source.Input{Path: dir, Kind: source.Kustomization})
	if len(errs) > 0 || len(streams) != 200 {
		t.Fatalf("%d streams, errors %v", len(streams), errs)
	}
	out := output(streams)
	held := 0
	lines := strings.Split(out, "\n")
	for _, s := range streams {
		held += len(s.Data)
		d := load.ParseFrom(s.Name, s.Data, s.Line).Documents[0]
		pos, _ := d.Locate("metadata.name")
		var name string
		fmt.Sscanf(strings.TrimSpace(lines[pos.Line-1]), "name: %s", &name)
		if want := d.Line; pos.Line < want || "name: "+name != strings.TrimSpace(lines[pos.Line-1]) {
			t.Fatalf("%s: metadata.name at line %d of the output: %q", s.Name, pos.Line, lines[pos.Line-1])
		}
	}
	if held > len(out) {
		t.Errorf("the streams hold %d bytes for an output of %d", held, len(out))
	}
}
