package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// goreleaserConfig is the part of .goreleaser.yaml that names what users
// download and pull.
type goreleaserConfig struct {
	Builds []struct {
		Env, Flags, Ldflags, Targets []string
	}
	Archives []struct {
		NameTemplate string `yaml:"name_template"`
	}
	DockersV2 []struct {
		Dockerfile string
		Images     []string
		Tags       []string
	} `yaml:"dockers_v2"`
	Krews []struct {
		URLTemplate string `yaml:"url_template"`
	}
}

func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The release builds static binaries for the six targets, stamped with
// the version, commit and date `backfire version` prints, into archives
// named as action/install.sh builds the name.
func TestReleaseConfigBuildsWhatTheDownloadsExpect(t *testing.T) {
	c := readGoreleaser(t)
	if len(c.Builds) != 1 {
		t.Fatalf("%d builds", len(c.Builds))
	}
	b := c.Builds[0]
	want := []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64", "windows_arm64"}
	if strings.Join(b.Targets, " ") != strings.Join(want, " ") {
		t.Errorf("targets %v, want %v", b.Targets, want)
	}
	if strings.Join(b.Env, " ") != "CGO_ENABLED=0" {
		t.Errorf("env %v: the image FROM scratch needs a static binary", b.Env)
	}
	ld := strings.Join(b.Ldflags, " ")
	for _, v := range []string{"version=v{{ .Version }}", "commit={{ .FullCommit }}", "date={{ .CommitDate }}"} {
		v = "backfire.dev/backfire/internal/buildinfo." + v
		if !strings.Contains(ld, "-X "+v) {
			t.Errorf("ldflags %q do not set %s", ld, v)
		}
	}
	script, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "action", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Archives) != 1 || c.Archives[0].NameTemplate != "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}" ||
		!strings.Contains(string(script), "archive=backfire_${version#v}_${os}_${arch}.$ext") {
		t.Errorf("archive names of .goreleaser.yaml %+v and action/install.sh disagree", c.Archives)
	}
}

// deploy/ and the chart run the image the release publishes, at the
// version the chart was released with, and backfire finds nothing in them
// (internal/webhook's deploy test checks the rest of them).
func TestDeployAndChartRunTheReleasedImage(t *testing.T) {
	c := readGoreleaser(t)
	if len(c.DockersV2) != 1 || len(c.DockersV2[0].Images) != 1 || c.DockersV2[0].Dockerfile != "image/Containerfile" {
		t.Fatalf("dockers_v2 %+v", c.DockersV2)
	}
	image := c.DockersV2[0].Images[0]
	var chart struct {
		AppVersion string `yaml:"appVersion"`
	}
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "charts", "backfire", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &chart); err != nil || !strings.HasPrefix(chart.AppVersion, "v") {
		t.Fatalf("Chart.yaml appVersion %q: %v", chart.AppVersion, err)
	}
	want := image + ":" + chart.AppVersion

	charts, err := helm.New(helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := testutil.RepoRoot(t)
	for _, dir := range []string{"deploy", filepath.Join("charts", "backfire")} {
		res, err := scan.Run(scan.Options{Paths: []string{filepath.Join(root, dir)}, Charts: charts, KeepObjects: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) > 0 || len(res.Errors) > 0 {
			t.Errorf("%s: %d findings, %d input errors", dir, len(res.Findings), len(res.Errors))
		}
		// deploy/ holds warn mode's Deployment and, in deploy/deny/, deny
		// mode's: each runs the one container of the released image.
		deployments := 0
		for _, o := range res.Objects {
			if d, ok := o.Typed.(*appsv1.Deployment); ok {
				deployments++
				if n := len(d.Spec.Template.Spec.Containers); n != 1 {
					t.Errorf("%s: Deployment %s has %d containers", dir, d.Name, n)
				}
				for _, ctr := range d.Spec.Template.Spec.Containers {
					if ctr.Image != want {
						t.Errorf("%s: container %s runs %s, want %s", dir, ctr.Name, ctr.Image, want)
					}
				}
			}
		}
		if deployments == 0 {
			t.Errorf("%s: no Deployment", dir)
		}
	}
}
