package supply

import "testing"

var images = []string{
	"registry", "registry:2", "docker.io/library/registry:2.8@sha256:" + sha, "localhost:5000/registry",
	"goharbor/harbor-core:v2.11.0", "my.mirror:8443/goharbor/harbor-core@sha256:" + sha,
	"ghcr.io/project-zot/zot-linux-amd64:v2.1.0", "sonatype/nexus3", "quay.io/projectquay/quay:3.12",
	"registry.gitlab.com/gitlab-org/build/cng/gitlab-container-registry:v4", "gitea/gitea:1.22-rootless",
	"releases-docker.jfrog.io/jfrog/artifactory-oss:7", "gcr.io/google_containers/kube-registry-proxy:0.4",
	"nginx", "postgres:16", "bitnami/postgresql@sha256:" + sha, "Registry", "goharbor/Harbor-core", "",
	"registry:", ":2", "a/registry/b", "registry@", "//registry", "my-registry", "registry-ui", "zot:latest",
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// The look at the image's last name only spares the parse: registryOf
// answers as the whole match does.
func TestRegistryOfAnswersAsTheWholeMatch(t *testing.T) {
	found := 0
	for _, img := range images {
		r, ok := registryOf(img)
		wr, wok := matchRegistry(img)
		if ok != wok || r != wr {
			t.Errorf("%q: registryOf %v %v, the whole match %v %v", img, r, ok, wr, wok)
		}
		if ok {
			found++
		}
	}
	if found < 10 {
		t.Errorf("%d registries found among the images, want the 10 or more listed", found)
	}
}

func FuzzRegistryOf(f *testing.F) {
	for _, img := range images {
		f.Add(img)
	}
	f.Fuzz(func(t *testing.T, img string) {
		r, ok := registryOf(img)
		wr, wok := matchRegistry(img)
		if ok != wok || r != wr {
			t.Errorf("%q: registryOf %v %v, the whole match %v %v", img, r, ok, wr, wok)
		}
	})
}
