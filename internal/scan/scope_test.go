package scan

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// findingsOf scans paths and returns its findings as "file rule object
// message" lines, sorted.
func findingsOf(t *testing.T, paths ...string) []string {
	t.Helper()
	res, err := Run(Options{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	var out []string
	for _, f := range res.Findings {
		out = append(out, filepath.ToSlash(f.File)+" "+f.Rule+" "+f.Object.String()+" "+f.Message)
	}
	slices.Sort(out)
	return out
}

// Cross-object questions are answered within a directory's tree: an
// autoscaler in a/ does not scale the Deployment of the same name in b/
// (it did: "scan b" reported BF104 on b's Deployment, "scan a b" did
// not). Scanning the two trees together gives what scanning each alone
// gives.
func TestSiblingTreesDoNotAnswerEachOther(t *testing.T) {
	docs := splitDocs(mustRead(t, "../rules/probes/testdata/BF104/positive/hpa-min-two.yaml"))
	deployment, hpa := docs[0], docs[1]
	dir := t.TempDir()
	t.Chdir(dir)
	write(t, dir, "a/deploy.yaml", strings.Replace(deployment, "/bin/ready", "/bin/other", 1))
	write(t, dir, "a/hpa.yaml", hpa)
	write(t, dir, "b/deploy.yaml", deployment)
	a, b := findingsOf(t, "a"), findingsOf(t, "b")
	if !slices.ContainsFunc(b, func(s string) bool { return strings.HasPrefix(s, "b/deploy.yaml BF104 ") }) {
		t.Fatalf("b alone: %v, want BF104 on its one-pod Deployment", b)
	}
	want := slices.Sorted(slices.Values(slices.Concat(a, b)))
	for _, paths := range [][]string{{"a", "b"}, {"."}} {
		got := findingsOf(t, paths...)
		for i := range got {
			got[i] = strings.TrimPrefix(got[i], "./")
		}
		if !slices.Equal(got, want) {
			t.Errorf("scan %v:\n got %v\nwant %v", paths, got, want)
		}
	}
}

// Within one tree, the directories above and below a file answer it:
// an autoscaler in apps/web/ scales the Deployment in apps/web/base/, as
// when both are in one file.
func TestNestedDirectoriesAnswerEachOther(t *testing.T) {
	all := mustRead(t, "../rules/probes/testdata/BF104/positive/hpa-min-two.yaml")
	docs := splitDocs(all)
	dir := t.TempDir()
	t.Chdir(dir)
	write(t, dir, "one/all.yaml", all)
	write(t, dir, "apps/web/base/deploy.yaml", docs[0])
	write(t, dir, "apps/web/hpa.yaml", docs[1])
	rules := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, strings.SplitN(l, " ", 2)[1])
		}
		return out
	}
	want, got := rules(findingsOf(t, "one")), rules(findingsOf(t, "apps"))
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("nested: %v, want %v (as in one file)", got, want)
	}
}
