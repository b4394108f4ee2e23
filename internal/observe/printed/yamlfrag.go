package printed

import (
	"bytes"

	yaml "go.yaml.in/yaml/v3"
)

// Fragments of kubectl get pod -o yaml pasted without the object around
// them: a container status ("lastState:", "state:", "restartCount:"), or
// the containerStatuses list. They hold no apiVersion or kind, so the
// object reader passes them over; they are read here into the same
// container lines a describe block gives, with their lines.

// maxFragment bounds the YAML read as a fragment: a paste, not a dump.
const maxFragment = 1 << 20

// yamlFragments reads the container statuses in a YAML fragment; nil when
// the stream is not YAML or holds none.
func yamlFragments(data []byte) []*Container {
	if len(data) > maxFragment || !bytes.Contains(data, []byte("State:")) && !bytes.Contains(data, []byte("restartCount:")) {
		return nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return nil
	}
	var out []*Container
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || depth > 64 {
			return
		}
		if n.Kind == yaml.MappingNode {
			if c := containerStatus(n); c != nil {
				out = append(out, c)
				return
			}
		}
		for _, ch := range n.Content {
			walk(ch, depth+1)
		}
	}
	walk(&doc, 0)
	return out
}

// containerStatus reads a mapping that is a container status: it has a
// state, a last state or a restart count.
func containerStatus(n *yaml.Node) *Container {
	c := &Container{Line: n.Line, fragment: true}
	found := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			if v.Kind == yaml.ScalarNode {
				c.Name = v.Value
			}
		case "restartCount":
			if v.Kind == yaml.ScalarNode {
				c.RestartCount, found = Field{Value: v.Value, Line: v.Line}, true
			}
		case "ready":
			if v.Kind == yaml.ScalarNode {
				c.Ready = Field{Value: v.Value, Line: v.Line}
			}
		case "image":
			if v.Kind == yaml.ScalarNode {
				c.Image = Field{Value: v.Value, Line: v.Line}
			}
		case "state", "lastState":
			if s, ok := stateNode(v); ok {
				found = true
				if k.Value == "state" {
					c.State = s
				} else {
					c.LastState = s
				}
			}
		}
	}
	if !found {
		return nil
	}
	return c
}

// stateNode reads "terminated: {exitCode, reason, startedAt, finishedAt}",
// "waiting: {reason, message}" or "running: {startedAt}".
func stateNode(n *yaml.Node) (State, bool) {
	if n.Kind != yaml.MappingNode {
		return State{}, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		kind := map[string]string{"terminated": "Terminated", "waiting": "Waiting", "running": "Running"}[k.Value]
		if kind == "" || v.Kind != yaml.MappingNode {
			continue
		}
		s := State{Kind: Field{Value: kind, Line: k.Line}}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			if fv.Kind != yaml.ScalarNode {
				continue
			}
			f := Field{Value: fv.Value, Line: fv.Line}
			switch fk.Value {
			case "exitCode":
				s.ExitCode = f
			case "reason":
				s.Reason = f
			case "message":
				s.Message = f
			case "signal":
				s.Signal = f
			case "startedAt":
				s.Started = f
			case "finishedAt":
				s.Finished = f
			}
		}
		return s, true
	}
	return State{}, false
}
