package kustomize

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/resource"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
)

// Remote resources. kustomize fetches what a kustomization names by URL:
// an http(s) file with an HTTP GET (api/internal/loader/fileloader.go,
// FileLoader.Load and httpClientGetContent), and a git repository, for
// resources, components and the other fields that take a directory, by
// running git (FileLoader.New, newLoaderAtGitClone; the cloner is
// git.ClonerUsingGitExec), over https, ssh or file. From a CI runner that
// is a request to any address the manifest names, and a program run on
// its say. A build does not fetch them unless they are allowed: before
// building, every kustomization the build reaches locally is read, and an
// entry kustomize would fetch is an error that names it.

// remoteFile reports whether kustomize fetches path over HTTP when it
// loads it as a file (IsRemoteFile in fileloader.go).
func remoteFile(path string) bool {
	u, err := url.Parse(path)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// remoteRoot reports whether kustomize clones path as a git repository
// when it opens it as a directory: FileLoader.New tries that first, for
// whatever git.NewRepoSpecFromURL accepts. That parser is internal to
// kustomize; resource.Origin.Append runs it and sets Repo when it
// accepts the path.
func remoteRoot(path string) (remote bool) {
	defer func() {
		if recover() != nil {
			remote = true // kustomize's parser choked on it: do not build it
		}
	}()
	return (&resource.Origin{}).Append(path).Repo != "" || remoteFile(path)
}

// fields of a kustomization, by how kustomize opens their entries.
var (
	// rootFields take directories (kustomizations, cloned when remote)
	// or files.
	rootFields = []string{"resources", "bases", "components", "generators", "transformers", "validators"}
	// fileFields take files: lists of paths, or maps and lists of maps
	// whose path-like keys name files.
	fileFields = []string{"crds", "configurations", "patchesStrategicMerge", "patches", "patchesJson6902", "replacements", "configMapGenerator", "secretGenerator", "openapi"}
	// fileKeys name files in the maps of fileFields and in the
	// configurations of generators and transformers.
	fileKeys = map[string]bool{"path": true, "paths": true, "files": true, "envs": true, "env": true}
)

// remoteEntries reads the kustomization of dir and those of the local
// directories it builds on, and returns an error for each entry that
// kustomize would fetch.
func remoteEntries(dir string, max int64) []load.Error {
	var errs []load.Error
	seen := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		abs, err := filepath.Abs(dir)
		if err != nil || seen[abs] {
			return
		}
		seen[abs] = true
		kfile := kustomizationFile(dir)
		if kfile == dir {
			return // not a kustomization: kustomize reports what it is
		}
		data, err := source.ReadRegular(kfile, max)
		if err != nil {
			return // the build reports it
		}
		var root yaml.Node
		if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
			return
		}
		refuse := func(n *yaml.Node, entry, how string) {
			errs = append(errs, load.Error{File: kfile, Line: n.Line, Column: n.Column,
				Message: fmt.Sprintf("%q is remote: kustomize would %s; not built (remote resources are refused unless --allow-remote-resources is given)", entry, how)})
		}
		k := root.Content[0]
		for i := 0; i+1 < len(k.Content); i += 2 {
			key, v := k.Content[i].Value, k.Content[i+1]
			switch {
			case contains(rootFields, key):
				for _, item := range v.Content {
					if item.Kind != yaml.ScalarNode {
						continue
					}
					entry := item.Value
					switch {
					case strings.Contains(entry, "\n"):
						// An inline generator or transformer configuration.
						checkFileKeys(inline(entry), func(p string) { refuse(item, p, "fetch it with an HTTP GET") })
					case remoteFile(entry):
						refuse(item, entry, "fetch it with an HTTP GET (or clone it with git)")
					case remoteRoot(entry):
						refuse(item, entry, "clone it with git")
					default:
						local := filepath.Join(dir, entry)
						st, err := os.Stat(local)
						switch {
						case err != nil:
						case st.IsDir():
							visit(local)
						case key == "generators" || key == "transformers" || key == "validators":
							if data, err := source.ReadRegular(local, max); err == nil {
								checkFileKeys(inline(string(data)), func(p string) { refuse(item, p, "fetch it with an HTTP GET") })
							}
						}
					}
				}
			case contains(fileFields, key):
				checkFiles(v, true, func(n *yaml.Node, p string) { refuse(n, p, "fetch it with an HTTP GET") })
			}
		}
	}
	visit(dir)
	return errs
}

// checkFiles calls bad for each string of a file field that names a
// remote file: the strings of the field itself (asFile), and in its maps
// the values of fileKeys. Other strings (a configMapGenerator's
// literals) are values, not files.
func checkFiles(n *yaml.Node, asFile bool, bad func(n *yaml.Node, path string)) {
	switch n.Kind {
	case yaml.ScalarNode:
		if !asFile {
			return
		}
		p := n.Value
		if _, after, ok := strings.Cut(p, "="); ok && !remoteFile(p) {
			p = after // configMapGenerator files: "key=path"
		}
		if !strings.Contains(p, "\n") && remoteFile(p) {
			bad(n, p)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			checkFiles(c, asFile, bad)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkFiles(n.Content[i+1], fileKeys[n.Content[i].Value], bad)
		}
	}
}

// checkFileKeys checks the file keys of the documents of a generator or
// transformer configuration.
func checkFileKeys(docs []*yaml.Node, bad func(path string)) {
	for _, d := range docs {
		checkFiles(d, false, func(_ *yaml.Node, p string) { bad(p) })
	}
}

// inline parses the documents of a configuration; nil when it does not
// parse (the build says why).
func inline(text string) []*yaml.Node {
	var out []*yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var n yaml.Node
		if dec.Decode(&n) != nil {
			return out
		}
		if len(n.Content) > 0 {
			out = append(out, n.Content[0])
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
