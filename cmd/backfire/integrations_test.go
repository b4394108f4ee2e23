package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/testutil"
)

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// The pre-commit hook parses, its file pattern selects manifests, and its
// command line is one the CLI accepts.
func TestPreCommitHook(t *testing.T) {
	var hooks []struct {
		ID, Name, Entry, Language, Files string
		Args                             []string
		PassFilenames                    *bool `yaml:"pass_filenames"`
	}
	readYAML(t, ".pre-commit-hooks.yaml", &hooks)
	if len(hooks) != 1 {
		t.Fatalf("%d hooks", len(hooks))
	}
	h := hooks[0]
	if h.ID != "backfire" || h.Name == "" || h.Language != "golang" || h.PassFilenames == nil || *h.PassFilenames {
		t.Errorf("hook %+v", h)
	}
	files := regexp.MustCompile(h.Files)
	for name, want := range map[string]bool{"a.yaml": true, "deploy/b.yml": true, "c.json": true, "main.go": false, "a.yaml.bak": false} {
		if files.MatchString(name) != want {
			t.Errorf("files pattern %q on %s: %v", h.Files, name, !want)
		}
	}
	// `go install ./...` names the binary after its directory.
	words := strings.Fields(h.Entry)
	if words[0] != "backfire" {
		t.Fatalf("entry %q does not run the backfire binary", h.Entry)
	}
	if _, err := os.Stat(filepath.Join(testutil.RepoRoot(t), "cmd", words[0], "main.go")); err != nil {
		t.Fatalf("no cmd/%s: %v", words[0], err)
	}
	dir := t.TempDir()
	src, _ := os.ReadFile(filepath.Join(examples(t), "registry-database.yaml"))
	testutil.WriteFiles(t, dir, map[string]string{"deploy/db.yaml": string(src)})
	t.Chdir(dir)
	out, stderr, code := execute(t, "", append(words[1:], h.Args...)...)
	if code != exitFindings || !strings.Contains(out, "deploy/db.yaml:52:9: error BF101 ") {
		t.Errorf("hook command: exit %d\n%s\nstderr %s", code, out, stderr)
	}
}

// The GitHub Action is a composite action whose steps all name a shell,
// read only inputs it declares, and call backfire with flags and formats
// the CLI has.
func TestGitHubAction(t *testing.T) {
	var action struct {
		Name    string
		Inputs  map[string]struct{ Default *string }
		Outputs map[string]struct{ Value string }
		Runs    struct {
			Using string
			Steps []struct {
				ID, Name, Shell, Run, Uses, If string
				Env                            map[string]string
				With                           map[string]string
			}
		}
	}
	readYAML(t, "action.yml", &action)
	if action.Name == "" || action.Runs.Using != "composite" {
		t.Fatalf("action %+v", action)
	}
	for name, in := range action.Inputs {
		if in.Default == nil {
			t.Errorf("input %s has no default", name)
		}
	}
	inputRef := regexp.MustCompile(`inputs\.([a-z-]+)`)
	flagRef := regexp.MustCompile(`(?:^|[\s(])--([a-z-]+)`)
	scan := newScanCommand()
	uploads := 0
	for _, s := range action.Runs.Steps {
		if s.Run != "" && s.Shell != "bash" {
			t.Errorf("step %q runs a script without shell: bash (composite steps need one)", s.Name)
		}
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q splices an expression into its script; pass it in env", s.Name)
		}
		all := s.Run + s.If + strings.Join(mapValues(s.Env), " ") + strings.Join(mapValues(s.With), " ")
		for _, m := range inputRef.FindAllStringSubmatch(all, -1) {
			if _, ok := action.Inputs[m[1]]; !ok {
				t.Errorf("step %q reads undeclared input %s", s.Name, m[1])
			}
		}
		for _, m := range flagRef.FindAllStringSubmatch(s.Run, -1) {
			if m[1] != "format" && scan.Flags().Lookup(m[1]) == nil {
				t.Errorf("step %q passes --%s, which backfire scan does not have", s.Name, m[1])
			}
		}
		for _, f := range regexp.MustCompile(`--format (\w+)`).FindAllStringSubmatch(s.Run, -1) {
			if !slices.Contains(report.Formats, f[1]) {
				t.Errorf("step %q asks for format %s", s.Name, f[1])
			}
		}
		if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") {
			uploads++
			if s.With["sarif_file"] != "${{ inputs.sarif-file }}" || s.With["category"] == "" {
				t.Errorf("upload step %+v", s.With)
			}
		}
	}
	if uploads != 1 {
		t.Errorf("%d SARIF upload steps, want 1", uploads)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
