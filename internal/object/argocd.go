package object

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Application is the part of an Argo CD argoproj.io/v1alpha1 Application
// that backfire reads: which differences it ignores, and whether its syncs
// respect them. Argo CD's module is large and pulls in its whole server;
// these fields are part of its stable CRD (argo-cd
// pkg/apis/application/v1alpha1/types.go).
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ApplicationSpec `json:"spec"`
}

// ApplicationSpec holds the destination, the ignored differences and the
// sync policy.
type ApplicationSpec struct {
	Destination       ApplicationDestination `json:"destination"`
	IgnoreDifferences []ResourceIgnore       `json:"ignoreDifferences,omitempty"`
	SyncPolicy        *SyncPolicy            `json:"syncPolicy,omitempty"`
}

// ApplicationDestination is where the application's resources go.
type ApplicationDestination struct {
	Namespace string `json:"namespace,omitempty"`
}

// ResourceIgnore is one entry of ignoreDifferences: the resources it covers
// (group, kind, and optionally name and namespace) and what it ignores.
type ResourceIgnore struct {
	Group                 string   `json:"group,omitempty"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// SyncPolicy holds the sync options ("RespectIgnoreDifferences=true").
type SyncPolicy struct {
	Automated   *SyncPolicyAutomated `json:"automated,omitempty"`
	SyncOptions []string             `json:"syncOptions,omitempty"`
}

// SyncPolicyAutomated is automated sync; SelfHeal syncs again whenever the
// live state drifts from Git.
type SyncPolicyAutomated struct {
	SelfHeal bool `json:"selfHeal,omitempty"`
}
