package main

import (
	"bufio"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"backfire.dev/backfire/internal/fixplan/textchange"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/testutil"
)

// sarifFixLog is the part of a SARIF log these tests read.
type sarifFixLog struct {
	Runs []struct {
		Results []struct {
			RuleID     string
			Properties struct{ Object string }
			Fixes      []struct {
				ArtifactChanges []struct {
					ArtifactLocation struct{ URI, URIBaseID string }
					Replacements     []struct {
						DeletedRegion   struct{ StartLine, StartColumn, EndLine, EndColumn int }
						InsertedContent struct{ Text string }
					}
				}
			}
		}
	}
}

// scanSARIFFixes runs scan --format sarif --sarif-fixes, checks the log
// against the official SARIF 2.1.0 schema, and returns it.
// root is the repository's, for the vendored schema.
func scanSARIFFixes(t *testing.T, root string, args ...string) sarifFixLog {
	t.Helper()
	out, stderr, code := execute(t, "", append([]string{"scan", "--format", "sarif", "--sarif-fixes"}, args...)...)
	if code != exitFindings || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	f, err := os.Open(filepath.Join(root, "internal", "report", "testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("https://backfire.test/sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("https://backfire.test/sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("SARIF with fixes does not validate against the SARIF 2.1.0 schema: %v", err)
	}
	var log sarifFixLog
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	return log
}

// changesOf collects the text changes of an object's results ("": of
// all results), by file, each distinct replacement once (the results of
// one object share their object's composed fix).
func changesOf(t *testing.T, log sarifFixLog, object string) map[string][]result.TextChange {
	t.Helper()
	out := map[string][]result.TextChange{}
	for _, r := range log.Runs[0].Results {
		if object != "" && r.Properties.Object != object {
			continue
		}
		for _, fx := range r.Fixes {
			for _, ac := range fx.ArtifactChanges {
				file, err := url.PathUnescape(ac.ArtifactLocation.URI)
				if err != nil || ac.ArtifactLocation.URIBaseID != "%SRCROOT%" {
					t.Fatalf("artifact location %+v", ac.ArtifactLocation)
				}
				for _, rp := range ac.Replacements {
					if rp.DeletedRegion.StartColumn != 1 {
						t.Fatalf("replacement starts at column %d", rp.DeletedRegion.StartColumn)
					}
					tc := result.TextChange{File: file, StartLine: rp.DeletedRegion.StartLine, EndLine: rp.DeletedRegion.EndLine, EndColumn: rp.DeletedRegion.EndColumn, Text: rp.InsertedContent.Text}
					if !slices.Contains(out[file], tc) {
						out[file] = append(out[file], tc)
					}
				}
			}
		}
	}
	return out
}

// fixedCopy copies src into sub of a new directory, runs backfire fix on
// path there, and returns the directory.
func fixedCopy(t *testing.T, src, sub, path string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, sub), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if _, stderr, code := execute(t, "", "fix", path); code == exitUsage {
		t.Fatalf("fix: %s", stderr)
	}
	return dir
}

// Applying every replacement of the object's results to the files as they
// are gives the files backfire fix writes.
func assertReplacementsGiveFixedFiles(t *testing.T, log sarifFixLog, object, fixedDir string) {
	t.Helper()
	changes := changesOf(t, log, object)
	if len(changes) == 0 {
		t.Fatalf("no fixes for %s", object)
	}
	for file, tcs := range changes {
		old, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		got, err := textchange.Apply(old, tcs)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		want, err := os.ReadFile(filepath.Join(fixedDir, file))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: the replacements give\n%s\nbackfire fix writes\n%s", file, got, want)
		}
	}
}

// diffLines reads a unified diff of one file: the old lines it deletes,
// and the text it adds, by the old line it goes before.
func diffLines(t *testing.T, diff string) (deleted map[int]bool, added map[int]string) {
	t.Helper()
	deleted, added = map[int]bool{}, map[int]string{}
	old, run := 0, 0 // run: the first old line of the deletions a '+' follows
	sc := bufio.NewScanner(strings.NewReader(diff))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "@@ -"):
			n, err := strconv.Atoi(strings.FieldsFunc(l[4:], func(r rune) bool { return r == ',' || r == ' ' })[0])
			if err != nil {
				t.Fatalf("hunk header %q", l)
			}
			old, run = n, n
		case strings.HasPrefix(l, "-"):
			deleted[old] = true
			old++
		case strings.HasPrefix(l, "+"):
			added[run] += l[1:] + "\n"
		case strings.HasPrefix(l, " "):
			old++
			run = old
		}
	}
	return deleted, added
}

// The BF101 result of the PostgreSQL outage's StatefulSet carries the
// change backfire fix --diff shows for the liveness probe, line for line,
// and all results of the object together rewrite the file as fix does.
func TestSARIFFixesAreTheTextChangesOfFix(t *testing.T) {
	root := testutil.RepoRoot(t)
	t.Chdir(root)
	const file = "examples/registry-database.yaml"
	log := scanSARIFFixes(t, root, file)
	diff, _, _ := execute(t, "", "fix", "--diff", file)
	deleted, added := diffLines(t, diff)

	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	probe, next := 0, 0 // the liveness probe's lines: probe < l < next
	for i, l := range lines {
		if strings.TrimSpace(l) == "livenessProbe:" {
			probe = i + 1
		} else if probe > 0 && next == 0 && strings.TrimSpace(l) == "readinessProbe:" {
			next = i + 1
		}
	}
	if probe == 0 || next == 0 {
		t.Fatal("no liveness probe in the example")
	}
	inProbe := func(l int) bool { return l > probe && l < next }
	var sarifDeleted []int
	sarifAdded := map[int]string{}
	found := false
	for _, r := range log.Runs[0].Results {
		if r.RuleID != "BF101" {
			continue
		}
		found = true
		if len(r.Fixes) != 1 || len(r.Fixes[0].ArtifactChanges) != 1 || r.Fixes[0].ArtifactChanges[0].ArtifactLocation.URI != file {
			t.Fatalf("BF101 fixes %+v", r.Fixes)
		}
		for _, rp := range r.Fixes[0].ArtifactChanges[0].Replacements {
			d := rp.DeletedRegion
			if d.EndColumn != 1 {
				t.Fatalf("region %+v does not end at a line start", d)
			}
			if !inProbe(d.StartLine) {
				continue
			}
			for l := d.StartLine; l < d.EndLine; l++ {
				sarifDeleted = append(sarifDeleted, l)
			}
			sarifAdded[d.StartLine] += rp.InsertedContent.Text
		}
	}
	if !found {
		t.Fatal("no BF101 result")
	}
	var diffDeleted []int
	for l := range deleted {
		if inProbe(l) {
			diffDeleted = append(diffDeleted, l)
		}
	}
	slices.Sort(diffDeleted)
	diffAdded := map[int]string{}
	for l, text := range added {
		if inProbe(l) {
			diffAdded[l] = text
		}
	}
	if len(diffDeleted) == 0 || !slices.Equal(sarifDeleted, diffDeleted) {
		t.Errorf("BF101's fix deletes lines %v of the liveness probe, fix --diff %v", sarifDeleted, diffDeleted)
	}
	for l, text := range diffAdded {
		// The diff adds before the first line a hunk deletes; the
		// replacement starts at that line.
		if sarifAdded[l] != text {
			t.Errorf("line %d: BF101's fix inserts %q, fix --diff %q", l, sarifAdded[l], text)
		}
	}
	if len(sarifAdded) != len(diffAdded) {
		t.Errorf("BF101's fix inserts at %v, fix --diff at %v", sarifAdded, diffAdded)
	}

	fixed := fixedCopy(t, filepath.Join(root, "examples"), "examples", file)
	t.Chdir(root)
	assertReplacementsGiveFixedFiles(t, log, "StatefulSet registry/registry-database", fixed)

	if out, _, _ := execute(t, "", "scan", "--format", "sarif", file); strings.Contains(out, `"fixes"`) {
		t.Error("fixes without --sarif-fixes")
	}
}

// An object built by a Kustomize overlay is fixed by a new patch file and
// an entry in the kustomization: its results' fixes create the one (its
// whole content inserted at line 1) and edit the other, and applied they
// give the files fix writes.
func TestSARIFFixesOfAnOverlayCreateThePatchFile(t *testing.T) {
	root := testutil.RepoRoot(t)
	src := filepath.Join(root, "internal", "fixplan", "testdata", "overlay")
	fixed := fixedCopy(t, src, ".", filepath.Join("overlays", "prod"))
	work := t.TempDir()
	if err := os.CopyFS(work, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	log := scanSARIFFixes(t, root, filepath.Join("overlays", "prod"))
	objects := map[string]bool{}
	for _, r := range log.Runs[0].Results {
		if len(r.Fixes) > 0 {
			objects[r.Properties.Object] = true
		}
	}
	if len(objects) != 1 {
		t.Fatalf("objects with fixes: %v", objects)
	}
	for object := range objects {
		changes := changesOf(t, log, object)
		var files []string
		for f := range changes {
			files = append(files, f)
		}
		slices.Sort(files)
		if len(files) != 2 || !strings.HasPrefix(filepath.Base(files[0]), "backfire-fix-") || filepath.Base(files[1]) != "kustomization.yaml" {
			t.Fatalf("%s: changes files %v, want the new patch file and the kustomization", object, files)
		}
		if p := changes[files[0]]; len(p) != 1 || p[0].StartLine != 1 || p[0].EndLine != 1 || p[0].EndColumn != 1 {
			t.Errorf("the new patch file is not one insertion at line 1: %+v", p)
		}
		assertReplacementsGiveFixedFiles(t, log, object, fixed)
	}
}

// A chart's objects are fixed in its values.yaml (and the database's
// literal liveness handler in its template): each object's results
// carry only the hunks of the keys its own fix set, and all of them
// together give the values file fix writes.
func TestSARIFFixesOfAChartAreItsValuesHunks(t *testing.T) {
	root := testutil.RepoRoot(t)
	src := testutil.Corpus(t, "harbor-helm")
	fixed := fixedCopy(t, src, "harbor", "harbor")
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "harbor"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	log := scanSARIFFixes(t, root, "harbor")
	owner := map[result.TextChange]string{}
	objects := map[string]bool{}
	for _, r := range log.Runs[0].Results {
		if len(r.Fixes) == 0 {
			continue
		}
		objects[r.Properties.Object] = true
		for file, tcs := range changesOf(t, log, r.Properties.Object) {
			// The database's liveness handler is written literally in its
			// template, and is fixed there.
			database := strings.HasSuffix(r.Properties.Object, "release-name-harbor-database") && file == "harbor/templates/database/database-ss.yaml"
			// So is Redis's tcpSocket readiness handler (BF106).
			redis := strings.HasSuffix(r.Properties.Object, "release-name-harbor-redis") && file == "harbor/templates/redis/statefulset.yaml"
			if file != "harbor/values.yaml" && !database && !redis {
				t.Errorf("%s: fix changes %s, want the chart's values.yaml", r.Properties.Object, file)
			}
			for _, tc := range tcs {
				if o, ok := owner[tc]; ok && o != r.Properties.Object {
					t.Errorf("the hunk at line %d is in the fixes of %s and %s", tc.StartLine, o, r.Properties.Object)
				}
				owner[tc] = r.Properties.Object
			}
		}
	}
	if len(objects) < 2 {
		t.Fatalf("%d objects with fixes, want the chart's several", len(objects))
	}
	assertReplacementsGiveFixedFiles(t, log, "", fixed)
}
