package helm

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"fmt"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"backfire.dev/backfire/internal/source"
)

// ValuesRefs lists, for each template of a chart that renders objects
// (named as Render names its stream), the values keys its text names
// (.Values.a.b, $.Values.a.b, $ctx.Values.a.b), in the order they first
// appear; a subchart's keys are under its name or alias, as the parent
// sets them. A key commented out in values.yaml is still named by the
// template that prints it, which is how backfire fix finds keys that are
// legitimate to add. Keys reached only through a with block's dot, or a
// variable that holds a values map, are not listed.
// namedRef is valuesRef, also through a variable that holds the root
// context: a template that ranges over a list keeps it as `$context :=
// .` and prints `$context.Values.a.b` inside (Mastodon's sidekiq
// Deployment). A variable that holds something else only adds a
// candidate that a trial render then disproves.
var namedRef = lazyregexp.New(`(?:^|[^A-Za-z0-9_\]\)])(?:\$[A-Za-z0-9_]*)?\.Values\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)

func (r *Renderer) ValuesRefs(in source.Input) (map[string][]string, error) {
	ch, err := loader.Load(in.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot load Helm chart: %v", err)
	}
	out := map[string][]string{}
	// dir is the chart's path as the engine names templates: a subchart
	// under its alias, which Helm sets as its name before rendering.
	var walk func(c *chart.Chart, dir, prefix string)
	walk = func(c *chart.Chart, dir, prefix string) {
		for _, t := range c.Templates {
			if t == nil || strings.HasPrefix(path.Base(t.Name), "_") {
				continue
			}
			name := r.name(in.Path, path.Join(dir, t.Name))
			seen := map[string]bool{}
			for _, m := range namedRef().FindAllStringSubmatch(string(t.Data), -1) {
				k := prefix + m[1]
				if !seen[k] {
					seen[k] = true
					out[name] = append(out[name], k)
				}
			}
		}
		aliases := map[string]string{}
		if c.Metadata != nil {
			for _, d := range c.Metadata.Dependencies {
				if d.Alias != "" {
					aliases[d.Name] = d.Alias
				}
			}
		}
		deps := c.Dependencies()
		sort.Slice(deps, func(i, j int) bool { return deps[i].Name() < deps[j].Name() })
		for _, d := range deps {
			as := d.Name()
			if a, ok := aliases[as]; ok {
				as = a
			}
			walk(d, dir+"/charts/"+as, prefix+as+".")
		}
	}
	walk(ch, ch.Name(), "")
	return out, nil
}
