package supply

// BF902Evidence: a container whose every start needs the cluster's own registry.
type BF902Evidence struct {
	Image          string `json:"image" doc:"the container's image"`
	PullPolicy     string `json:"pullPolicy" doc:"imagePullPolicy in effect: Always"`
	PolicyWritten  bool   `json:"policyWritten" doc:"whether imagePullPolicy is written; else the API server's default (Always for :latest or no tag)"`
	RegistryHost   string `json:"registryHost" doc:"the image's registry host"`
	Registry       string `json:"registry" doc:"the registry the input runs at that host: server and workload"`
	ServedAs       string `json:"servedAs" doc:"how the input makes that host reach the registry: a Service name, a node port, a host port, an Ingress, the local-registry-hosting ConfigMap"`
	PartOfRegistry bool   `json:"partOfRegistry" doc:"whether the workload belongs to the registry's own release (the registry needs it running to serve)"`
}
