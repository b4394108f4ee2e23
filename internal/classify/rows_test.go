package classify

import (
	"path"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/testutil"
)

// matchImageEveryRun is matchImage trying every run of every row, the
// general way the first-byte test skips.
func matchImageEveryRun(i int, base string, tokens []string) bool {
	s := &Servers[i]
	for _, n := range s.ImageNames {
		if base == n {
			return true
		}
	}
	for _, it := range s.ImageTokens {
		want := splitTokens(it)
		for j := 0; j+len(want) <= len(tokens); j++ {
			if matchRun(tokens[j:j+len(want)], want) {
				return true
			}
		}
	}
	return false
}

// checkRowsSkipped asserts what makes ContainerIn's skipping exact: the
// image of c names a row as matchImage says with or without the first-byte
// test, and every row that an image, a port or an environment variable
// names as strong evidence is among those ContainerIn weighs. It returns
// how many rows c's strong evidence names.
func checkRowsSkipped(t *testing.T, c *corev1.Container) int {
	t.Helper()
	base := path.Base(imageRepository(c.Image))
	tokens := splitTokens(base)
	first, named := firstBytes(tokens), rowsNamedBy(c)
	strongRows := 0
	for i := range Servers {
		s := &Servers[i]
		image := matchImage(i, base, tokens, first)
		if general := matchImageEveryRun(i, base, tokens); image != general {
			t.Fatalf("container %s, image %q, row %s: matchImage %v, every run %v", c.Name, c.Image, s.Name, image, general)
		}
		strong := image
		for _, p := range c.Ports {
			strong = strong || containsPort(s.Ports, p.ContainerPort)
		}
		for _, e := range c.Env {
			strong = strong || contains(s.Env, e.Name)
		}
		if strong {
			strongRows++
			if !image && !named.has(i) {
				t.Fatalf("container %s (image %q): row %s has strong evidence but is skipped", c.Name, c.Image, s.Name)
			}
		}
	}
	return strongRows
}

// containersUnder decodes the containers of the pod templates of the YAML
// files under the roots.
func containersUnder(t *testing.T, roots ...string) []*corev1.Container {
	t.Helper()
	var out []*corev1.Container
	testutil.EachYAML(t, roots, func(p string, data []byte) {
		for _, doc := range load.Parse(p, data).Documents {
			o, lerr := object.Decode(doc)
			if lerr != nil || o.Typed == nil || o.PodTemplate() == nil {
				continue
			}
			spec := o.PodTemplate().Spec
			for i := range spec.InitContainers {
				out = append(out, &spec.InitContainers[i])
			}
			for i := range spec.Containers {
				out = append(out, &spec.Containers[i])
			}
		}
	})
	return out
}

// On every container of the benchmark corpus and of the repository's
// manifests, ContainerIn skips only rows that nothing strong names.
func TestContainerInSkipsOnlyUnnamedRows(t *testing.T) {
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 5); err != nil {
		t.Fatal(err)
	}
	containers := containersUnder(t, dir, "../../testdata", "../../examples", "../rules")
	named := 0
	for _, c := range containers {
		if checkRowsSkipped(t, c) > 0 {
			named++
		}
	}
	// The corpus runs databases by image, port and env: a test that saw
	// none would hold nothing.
	if len(containers) < 500 || named < 100 {
		t.Fatalf("%d containers, %d named by strong evidence: the manifests were not read", len(containers), named)
	}
	t.Logf("%d containers, %d named by strong evidence", len(containers), named)
}

func FuzzContainerInRows(f *testing.F) {
	f.Add("docker.io/library/postgres:16", int32(5432), "PGDATA")
	f.Add("registry.example:5000/team/redis-server2@sha256:abc", int32(6379), "REDIS_PASSWORD")
	f.Add("bitnami/mongodb-sharded", int32(27017), "MONGO_INITDB_ROOT_USERNAME")
	f.Add("svc-05999", int32(8080), "LOG_LEVEL")
	f.Add("registry.example.com/app", int32(8080), "PGDATA")    // env alone
	f.Add("registry.example.com/app", int32(5432), "LOG_LEVEL") // port alone
	f.Fuzz(func(t *testing.T, image string, port int32, env string) {
		checkRowsSkipped(t, &corev1.Container{
			Name:  "c",
			Image: image,
			Ports: []corev1.ContainerPort{{ContainerPort: port}},
			Env:   []corev1.EnvVar{{Name: env}},
		})
	})
}
