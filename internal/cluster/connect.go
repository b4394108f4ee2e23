package cluster

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Client-side limits: a scan is a burst of list calls, and it must neither
// crowd out the cluster's own clients nor hang a CI job on a dead server.
const (
	QPS            = 20
	Burst          = 40
	RequestTimeout = 30 * time.Second
)

// Target is a cluster to read, as a kubeconfig context describes it.
type Target struct {
	Config *rest.Config
	// Context is the context's name, "in-cluster" for the service account
	// of a pod; file names of live objects start with cluster://<Context>.
	Context string
	// Namespace is the context's namespace ("default" when it names none).
	Namespace string
}

// Connect loads the client configuration the way kubectl does: the
// kubeconfig file (KUBECONFIG or ~/.kube/config unless kubeconfig is given),
// its current context unless contextName is given, and a pod's service account
// when there is no kubeconfig at all.
func Connect(kubeconfig, contextName string) (*Target, error) {
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, &clientcmd.ConfigOverrides{CurrentContext: contextName})
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		// client-go's own text ("try setting KUBERNETES_MASTER") names a
		// variable read only through ConfigOverrides.ClusterDefaults, which
		// client-go marks deprecated and Connect does not set: setting it
		// would change nothing (k8s.io/client-go tools/clientcmd,
		// validation.go and client_config.go).
		return nil, errors.New("no cluster to read: no kubeconfig (--kubeconfig, $KUBECONFIG or ~/.kube/config) and not in a pod; point --kubeconfig at one, or set KUBECONFIG")
	}
	if err != nil {
		return nil, fmt.Errorf("cluster configuration: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("cluster configuration: %w", err)
	}
	name := contextName
	if name == "" {
		if raw, err := cc.RawConfig(); err == nil {
			name = raw.CurrentContext
		}
	}
	if name == "" {
		name = "in-cluster"
	}
	cfg.QPS, cfg.Burst = QPS, Burst
	if cfg.Timeout == 0 {
		cfg.Timeout = RequestTimeout
	}
	cfg.UserAgent = "backfire"
	return &Target{Config: cfg, Context: name, Namespace: ns}, nil
}
