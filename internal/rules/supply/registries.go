package supply

import (
	"path"
	"strings"

	"github.com/distribution/reference"

	"backfire.dev/backfire/internal/index"
)

// Registry is a container registry server, or a front that serves one (a
// proxy on a host port), recognised by its image.
type Registry struct {
	Name string
	// Images are repository paths without the registry host
	// ("goharbor/harbor-core"), or a last path element alone ("registry",
	// Docker Hub's library image).
	Images []string
}

// Registries are the registry servers and fronts backfire recognises.
var Registries = []Registry{
	{Name: "Docker Distribution", Images: []string{"registry", "library/registry", "distribution/distribution"}},
	{Name: "Harbor", Images: []string{"goharbor/harbor-core", "goharbor/registry-photon", "goharbor/harbor-registryctl", "goharbor/nginx-photon", "goharbor/harbor-portal"}},
	{Name: "Zot", Images: []string{"project-zot/zot", "project-zot/zot-linux-amd64", "project-zot/zot-linux-arm64", "project-zot/zot-minimal-linux-amd64"}},
	{Name: "Nexus Repository", Images: []string{"sonatype/nexus3"}},
	{Name: "Quay", Images: []string{"projectquay/quay"}},
	{Name: "GitLab container registry", Images: []string{"gitlab-org/build/cng/gitlab-container-registry"}},
	{Name: "Gitea", Images: []string{"gitea/gitea"}},
	{Name: "JFrog Artifactory", Images: []string{"jfrog/artifactory-oss", "jfrog/artifactory-pro", "jfrog/artifactory-jcr"}},
	{Name: "kube-registry-proxy", Images: []string{"k8s-minikube/kube-registry-proxy", "google_containers/kube-registry-proxy"}},
}

// image is a container image reference read as the kubelet reads it
// (github.com/distribution/reference, which pkg/util/parsers uses).
type image struct {
	host, repo, tag, digest string // host "docker.io" when unnamed
}

func parseImage(s string) (image, bool) {
	named, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		return image{}, false
	}
	im := image{host: reference.Domain(named), repo: reference.Path(named)}
	if t, ok := named.(reference.Tagged); ok {
		im.tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		im.digest = d.Digest().String()
	}
	return im, true
}

// registryOf says which registry an image runs, if any.
func registryOf(img string) (*Registry, bool) {
	if !registryNames[lastName(img)] {
		return nil, false // the index asks this of every container
	}
	return matchRegistry(img)
}

// matchRegistry is registryOf without the look at the image's last name.
func matchRegistry(img string) (*Registry, bool) {
	im, ok := parseImage(img)
	if !ok {
		return nil, false
	}
	for i, r := range Registries {
		for _, want := range r.Images {
			if im.repo == want || strings.HasSuffix(im.repo, "/"+want) || (!strings.Contains(want, "/") && path.Base(im.repo) == want) {
				return &Registries[i], true
			}
		}
	}
	return nil, false
}

// registryNames are the last path elements of the Registries' images:
// every image registryOf recognises ends its repository with one.
var registryNames = func() map[string]bool {
	names := map[string]bool{}
	for _, r := range Registries {
		for _, want := range r.Images {
			names[path.Base(want)] = true
		}
	}
	return names
}()

// lastName is the last path element of an image reference's repository,
// as written: after the last "/" before any digest, without the tag. For
// a reference parseImage reads, it is path.Base of the repository.
func lastName(img string) string {
	if i := strings.IndexByte(img, '@'); i >= 0 {
		img = img[:i]
	}
	if i := strings.LastIndexByte(img, '/'); i >= 0 {
		img = img[i+1:]
	}
	if i := strings.IndexByte(img, ':'); i >= 0 {
		img = img[:i]
	}
	return img
}

// registries is the index's question: the workloads that run a registry.
var registries = index.RegisterPodFilter(&index.PodFilter{Name: "registries", Match: func(ps index.PodSet) bool {
	for _, c := range ps.Containers {
		if _, ok := registryOf(c.Image); ok {
			return true
		}
	}
	return false
}})
