package yamledit

import (
	"strings"
	"testing"

	"backfire.dev/backfire/internal/load"
)

// A values file that repeats a key (Mastodon's chart repeats
// redis.replica): Helm reads it with the last occurrence in effect.
const repeatedValues = `redis:
  replica:
    count: 1
  replica:
    count: 2
livenessProbe:
  periodSeconds: 10
`

func editValues(t *testing.T, src, patch string, o Options) (string, error) {
	t.Helper()
	var p map[string]any
	if err := jsonUnmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	out, err := EditWith([]byte(src), load.Position{Line: 1, Column: 1}, p, o)
	return string(out), err
}

// An edit elsewhere in the file goes through; the repeated key stays.
func TestRepeatedKeyEditElsewhere(t *testing.T) {
	out, err := editValues(t, repeatedValues, `{"livenessProbe": {"timeoutSeconds": 5}}`, Options{Values: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(repeatedValues, "periodSeconds: 10\n", "periodSeconds: 10\n  timeoutSeconds: 5\n", 1); out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// An edit under the repeated key goes to its last occurrence, the one
// Helm reads, and says so; the first stays as it was.
func TestRepeatedKeyEditGoesToTheLast(t *testing.T) {
	var notes []string
	out, err := editValues(t, repeatedValues, `{"redis": {"replica": {"count": 3}}}`, Options{Values: true, Notes: &notes})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(repeatedValues, "count: 2", "count: 3", 1); out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "redis.replica is repeated (line 2 and line 4)") {
		t.Errorf("notes %q", notes)
	}
	// A key new under the repeated one goes to the last as well.
	out, err = editValues(t, repeatedValues, `{"redis": {"replica": {"resources": {"requests": {"cpu": "100m"}}}}}`, Options{Values: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(repeatedValues, "count: 2\n", "count: 2\n    resources:\n      requests:\n        cpu: 100m\n", 1); out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// Deleting a repeated key deletes every occurrence: an earlier one left
// behind would come into effect. Overriding it with null (a values
// file's deletion) writes the null at the last.
func TestRepeatedKeyDeleted(t *testing.T) {
	out, err := editValues(t, repeatedValues, `{"redis": {"replica": null, "master": {"count": 1}}}`, Options{Values: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "redis:\n  master:\n    count: 1\nlivenessProbe:\n  periodSeconds: 10\n"; out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out, err = editValues(t, repeatedValues, `{"redis": {"replica": null}}`, Options{Values: true, KeepNulls: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(repeatedValues, "  replica:\n    count: 2\n", "  replica: null\n", 1); out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// A manifest is not a values file: a repeated key stays an error, with
// its lines, as the scan reports it.
func TestRepeatedKeyInManifestRefused(t *testing.T) {
	_, err := editValues(t, repeatedValues, `{"livenessProbe": {"timeoutSeconds": 5}}`, Options{})
	if err == nil || !strings.Contains(err.Error(), `line 4: mapping key "replica" already defined at line 2`) {
		t.Errorf("err %v", err)
	}
}
