// Package object decodes documents into the upstream Go types (k8s.io/api,
// Argo Rollouts v1alpha1, Flagger v1beta1) and offers kind-independent views of them: the pod
// template of any workload, its replica count.
package object

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	flaggerv1beta1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"backfire.dev/backfire/internal/load"
)

// Ref names an object the way findings report it.
type Ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Object is one decoded Kubernetes object.
type Object struct {
	Ref
	Doc  *load.Document
	Meta *metav1.ObjectMeta
	// Typed is a pointer to the upstream type (*appsv1.Deployment,
	// *rolloutsv1alpha1.Rollout, ...), or nil for kinds backfire does not model.
	Typed any
	// Dropped are the fields of the document that Kubernetes drops on
	// reading it and that differ only in case from a field it reads
	// (`TcpSocket` beside `tcpSocket`), each an input error at its key
	// (see unknown.go). The object is decoded without them, as the API
	// server decodes it.
	Dropped []load.Error
}

// Group returns the API group of the object ("" for the core group).
func (o *Object) Group() string { return group(o.APIVersion) }

func group(apiVersion string) string {
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// decoders map API group and kind to a constructor of the upstream type. The
// version is not part of the key: older versions of these kinds
// (apps/v1beta2, batch/v1beta1, autoscaling/v1) share the fields that matter.
var decoders = map[string]func() any{
	"/Pod":       func() any { return &corev1.Pod{} },
	"/Service":   func() any { return &corev1.Service{} },
	"/ConfigMap": func() any { return &corev1.ConfigMap{} },
	"/ReplicationController": func() any {
		return &corev1.ReplicationController{}
	},
	"apps/Deployment":       func() any { return &appsv1.Deployment{} },
	"extensions/Deployment": func() any { return &appsv1.Deployment{} },
	"apps/StatefulSet":      func() any { return &appsv1.StatefulSet{} },
	"apps/DaemonSet":        func() any { return &appsv1.DaemonSet{} },
	"extensions/DaemonSet":  func() any { return &appsv1.DaemonSet{} },
	"apps/ReplicaSet":       func() any { return &appsv1.ReplicaSet{} },
	"batch/Job":             func() any { return &batchv1.Job{} },
	"batch/CronJob":         func() any { return &batchv1.CronJob{} },
	"autoscaling/HorizontalPodAutoscaler": func() any {
		return &autoscalingv2.HorizontalPodAutoscaler{}
	},
	"argoproj.io/Rollout":                 func() any { return &rolloutsv1alpha1.Rollout{} },
	"argoproj.io/AnalysisTemplate":        func() any { return &rolloutsv1alpha1.AnalysisTemplate{} },
	"argoproj.io/ClusterAnalysisTemplate": func() any { return &rolloutsv1alpha1.ClusterAnalysisTemplate{} },
	"keda.sh/ScaledObject":                func() any { return &ScaledObject{} },
	// Flagger's own types (flagger.app/v1beta1; v1alpha3 shares them).
	"flagger.app/Canary":         func() any { return &flaggerv1beta1.Canary{} },
	"flagger.app/MetricTemplate": func() any { return &flaggerv1beta1.MetricTemplate{} },
	// policy/v1beta1 shares v1's fields, but an empty selector there
	// selects no pod: the rules read the version from the Ref.
	"policy/PodDisruptionBudget":          func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/NetworkPolicy":     func() any { return &networkingv1.NetworkPolicy{} },
	"networking.k8s.io/Ingress":           func() any { return &networkingv1.Ingress{} },
	"networking.istio.io/DestinationRule": func() any { return &DestinationRule{} },
	"argoproj.io/Application":             func() any { return &Application{} },
}

// Modelled reports whether backfire decodes this kind into a typed value.
func Modelled(apiVersion, kind string) bool {
	_, ok := decoders[group(apiVersion)+"/"+kind]
	return ok
}

// Decode turns a document into an Object. A value of the wrong type
// (timeoutSeconds: "5") is an error at the line of that value, and the
// object is not returned: scanning a half-decoded object would report
// defaults the author did not write.
func Decode(doc *load.Document) (*Object, *load.Error) {
	o := &Object{Doc: doc, Ref: Ref{APIVersion: doc.APIVersion, Kind: doc.Kind}}
	mk, ok := decoders[group(doc.APIVersion)+"/"+doc.Kind]
	var target any
	if ok {
		target = mk()
	} else {
		target = &struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}{}
	}
	// The API server's own decoding (k8s.io/apimachinery
	// pkg/runtime/serializer/json/json.go, Serializer.unmarshal:
	// sigs.k8s.io/json, field names matched case-sensitively; its strict
	// mode lists the unknown fields it drops). encoding/json and
	// json-iterator match field names case-insensitively: `Exec: null`
	// written after `exec:` would empty the probe Kubernetes runs.
	// Most documents name only fields of their type, exactly: those are
	// decoded by the faster exact decode, the others again by the strict
	// one (see decodeExact).
	var unknown []error
	var err error
	switch {
	case ok && decodeExact(doc.JSON, target):
	case ok:
		target = mk()
		unknown, err = kjson.UnmarshalStrict(doc.JSON, target, kjson.DisallowUnknownFields)
	default:
		err = kjson.UnmarshalCaseSensitivePreserveInts(doc.JSON, target)
	}
	if err != nil {
		return nil, decodeError(doc, err)
	}
	if ok {
		o.Typed = target
		o.Meta = metaOf(target)
	} else {
		o.Meta = &target.(*struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}).Metadata
	}
	o.named()
	if len(unknown) > 0 {
		o.Dropped = dropped(o, target, unknown)
	}
	if t := o.PodTemplate(); t != nil {
		if errs := validateProbes(t); len(errs) > 0 {
			return nil, invalid(o, errs)
		}
	}
	return o, nil
}

// named sets the object's name and namespace from its metadata.
func (o *Object) named() {
	if o.Meta == nil {
		o.Meta = &metav1.ObjectMeta{}
	}
	o.Name, o.Namespace = o.Meta.Name, o.Meta.Namespace
	if o.Name == "" && o.Meta.GenerateName != "" {
		o.Name = o.Meta.GenerateName
	}
}

// Retyped is the object Decode gives for doc when its typed value decodes
// to typed, a value of the type Decode makes for doc's kind: what
// patching an object's typed value rather than its document gives
// (package typedpatch), with nothing dropped (the caller patches only
// objects that had nothing dropped, with fields their type has). It is
// false where Decode would reject the object (its probes' validation).
func Retyped(doc *load.Document, typed any) (*Object, bool) {
	o := &Object{Doc: doc, Ref: Ref{APIVersion: doc.APIVersion, Kind: doc.Kind}, Typed: typed, Meta: metaOf(typed)}
	o.named()
	if t := o.PodTemplate(); t != nil && len(validateProbes(t)) > 0 {
		return nil, false
	}
	return o, true
}

func metaOf(v any) *metav1.ObjectMeta {
	type metaHolder interface{ GetObjectMeta() metav1.Object }
	if h, ok := v.(metaHolder); ok {
		if m, ok := h.GetObjectMeta().(*metav1.ObjectMeta); ok {
			return m
		}
	}
	return nil
}

func decodeError(doc *load.Document, err error) *load.Error {
	e := &load.Error{File: doc.File, Line: doc.Line, Message: fmt.Sprintf("%s: %v", doc.Kind, err)}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		pos := doc.PositionAt(typeErr.Offset - 1)
		e.Line, e.Column = pos.Line, pos.Column
		what := typeErr.Value
		e.Message = fmt.Sprintf("%s: field %s must be %s, not %s", doc.Kind, typeErr.Field, kindOfGoType(typeErr.Type.String()), what)
	case errors.As(err, &syntaxErr):
		pos := doc.PositionAt(syntaxErr.Offset - 1)
		e.Line, e.Column = pos.Line, pos.Column
	default:
		if ok, off := kjson.SyntaxErrorOffset(err); ok {
			pos := doc.PositionAt(off - 1)
			e.Line, e.Column = pos.Line, pos.Column
		}
	}
	return e
}

func kindOfGoType(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct"), strings.Contains(t, "."):
		return "an object"
	}
	return t
}
