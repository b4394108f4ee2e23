package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/cluster/clustertest"
)

// kubeconfig writes a kubeconfig with three contexts on the test cluster:
// "admin" (no namespace), "db" (namespace registry) and "restricted" (a
// user who may list only Deployments in shop).
func kubeconfig(t *testing.T, admin, restricted *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: admin.CertData, ClientKeyData: admin.KeyData}
	kc.AuthInfos["restricted"] = &clientcmdapi.AuthInfo{ClientCertificateData: restricted.CertData, ClientKeyData: restricted.KeyData}
	kc.Contexts["admin"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.Contexts["db"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin", Namespace: "registry"}
	kc.Contexts["restricted"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "restricted", Namespace: "shop"}
	kc.CurrentContext = "admin"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

type jsonReport struct {
	Findings []struct {
		Rule, File string
		Line       int
		Object     struct{ Kind, Namespace, Name string }
	}
	Errors  []struct{ File, Message string }
	Summary struct{ Objects int }
}

func TestScanCluster(t *testing.T) {
	env := clustertest.Shared(t)
	t.Cleanup(clustertest.StopShared)
	env.Apply(t, filepath.Join(examples(t), "registry-database.yaml"), filepath.Join(examples(t), "order-front-api.yaml"), filepath.Join(examples(t), "healthy-web.yaml"))
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	kc := kubeconfig(t, env.Config, env.ListOnly(t, "backfire-restricted", "shop", deployments))

	t.Run("all namespaces, json", func(t *testing.T) {
		out, stderr, code := execute(t, "", "scan", "--cluster", "--kubeconfig", kc, "-A", "--format", "json")
		if code != exitFindings || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		validateSchema(t, out)
		var rep jsonReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, f := range rep.Findings {
			seen[f.Object.Kind+" "+f.Object.Namespace+"/"+f.Object.Name] = true
			if !strings.HasPrefix(f.File, "cluster://admin/"+f.Object.Namespace+"/"+f.Object.Kind+"/") || f.Line < 1 {
				t.Errorf("%s on %s/%s at %s:%d", f.Rule, f.Object.Namespace, f.Object.Name, f.File, f.Line)
			}
		}
		if !seen["StatefulSet registry/registry-database"] || !seen["Rollout order/order-front-api"] {
			t.Fatalf("findings on %v", seen)
		}
	})

	t.Run("the context's namespace", func(t *testing.T) {
		out, _, code := execute(t, "", "scan", "--cluster", "--kubeconfig", kc, "--context", "db")
		if code != exitFindings || !strings.Contains(out, "StatefulSet registry/registry-database  cluster://db/registry/StatefulSet/registry-database") || strings.Contains(out, "order-front-api") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})

	t.Run("--namespace overrides the context's", func(t *testing.T) {
		out, _, code := execute(t, "", "scan", "--cluster", "--kubeconfig", kc, "--context", "db", "--namespace", "order")
		if code != exitFindings || !strings.Contains(out, "Rollout order/order-front-api  cluster://db/order/Rollout/order-front-api") || strings.Contains(out, "registry-database") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})

	t.Run("RBAC denials are input errors, the rest is scanned", func(t *testing.T) {
		out, stderr, code := execute(t, "", "scan", "--cluster", "--kubeconfig", kc, "--context", "restricted", "--format", "json")
		if code != exitUsage {
			t.Fatalf("exit %d, want %d: the scan is incomplete", code, exitUsage)
		}
		var rep jsonReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		// One error per kind the restricted user may not list: every
		// default kind but one.
		if want := len(cluster.DefaultKinds) - 1; rep.Summary.Objects != 1 || len(rep.Errors) != want {
			t.Fatalf("%d objects, %d errors: %+v\nstderr %s", rep.Summary.Objects, len(rep.Errors), rep.Errors, stderr)
		}
		for _, e := range rep.Errors {
			if e.File != "cluster://restricted" || !strings.Contains(e.Message, `forbidden: User "backfire-restricted" cannot list resource`) {
				t.Errorf("%+v", e)
			}
		}
	})

	t.Run("a CRD that is not installed is a note", func(t *testing.T) {
		env.RemoveCRD(t, "scaledobjects.keda.sh", "keda.sh/v1alpha1")
		out, stderr, code := execute(t, "", "scan", "--cluster", "--kubeconfig", kc, "-A")
		want := "backfire: note: cluster://admin: the cluster does not serve scaledobjects.keda.sh/v1alpha1 (its CRD is not installed); ScaledObjects not scanned\n"
		if code != exitFindings || stderr != want || !strings.Contains(out, "registry-database") {
			t.Fatalf("exit %d, stderr %q, want %q\n%s", code, stderr, want, out)
		}
	})
}

func TestScanClusterUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scan"}, "backfire: scan needs at least one PATH, - for standard input, or --cluster\n"},
		{[]string{"scan", "--context", "prod", "x.yaml"}, "backfire: --context needs --cluster\n"},
		{[]string{"scan", "-A", "x.yaml"}, "backfire: --all-namespaces needs --cluster\n"},
		{[]string{"scan", "--cluster", "-A", "--namespace", "x"}, "backfire: --namespace and --all-namespaces exclude each other\n"},
	} {
		_, stderr, code := execute(t, "", tc.args...)
		if code != exitUsage || stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
	_, stderr, code := execute(t, "", "scan", "--cluster", "--kubeconfig", filepath.Join(t.TempDir(), "missing"))
	if code != exitUsage || !strings.HasPrefix(stderr, "backfire: cluster configuration: ") {
		t.Errorf("a missing kubeconfig: exit %d, stderr %q", code, stderr)
	}
}
