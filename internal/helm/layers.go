package helm

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"backfire.dev/backfire/internal/source"
)

// ValuesLayer is one file of values a chart is rendered with: where
// backfire fix can write a key.
type ValuesLayer struct {
	// File is the file as shown: a --values path, or the chart's (or a
	// subchart's) values.yaml under the chart as given.
	File string
	// Prefix is where the file's keys sit in the root chart's values:
	// "redis." for subchart redis's values.yaml, "" otherwise.
	Prefix string
	// User says it is a --values file, not a chart's own values.yaml.
	User bool
	// Lines holds the line of each dotted key the file sets (without
	// Prefix).
	Lines map[string]int
}

// Values returns the values a chart's templates see as .Values (the
// chart's defaults coalesced with the user's values), and the files they
// come from, highest precedence first (--values files, last first, then
// the chart's values.yaml, then its subcharts').
func (r *Renderer) Values(in source.Input) (values map[string]any, layers []ValuesLayer, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cannot load Helm chart: %v", p)
		}
	}()
	ch, err := loader.Load(in.Path)
	if err != nil {
		return nil, nil, err
	}
	userVals, err := copyMap(r.merged)
	if err != nil {
		return nil, nil, err
	}
	if err := chartutil.ProcessDependenciesWithMerge(ch, userVals); err != nil {
		return nil, nil, err
	}
	vals, err := r.renderValues(ch, userVals)
	if err != nil {
		return nil, nil, err
	}
	v, _ := vals["Values"].(chartutil.Values)
	for _, l := range r.layers(in.Path, ch) {
		if l.lines == nil {
			continue // --set
		}
		layers = append(layers, ValuesLayer{File: l.name, Prefix: l.prefix, User: l.prefix == "" && r.isUser(l.valuesLayer), Lines: l.lines})
	}
	return v.AsMap(), layers, nil
}

func (r *Renderer) isUser(l *valuesLayer) bool {
	for _, u := range r.user {
		if u == l {
			return true
		}
	}
	return false
}
