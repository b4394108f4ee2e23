package controllers

import (
	"backfire.dev/backfire/internal/exactjson"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF801: a workload whose replica count an autoscaler owns, while the
// manifest a sync tool applies also fixes it. Every apply sets the count
// back, and the autoscaler climbs back up at its scale-up rate.
var BF801 = rules.Register(&rules.Rule{
	ID:       "BF801",
	Slug:     "autoscaled-replicas-reset-by-sync",
	Severity: finding.Warning,
	Summary:  "An autoscaled workload's manifest also fixes spec.replicas: every apply or GitOps sync scales it back to that count under the load the autoscaler was answering.",
	Kinds:    []string{"Deployment", "StatefulSet", "Rollout"},
	Reads:    []string{index.Autoscalers, index.WorkloadRefs, "Application"},
	Evidence: []any{BF801Evidence{}},
	Fix:      rules.FixFields{Sets: []string{"spec.replicas"}, From: []string{"spec.replicas"}},
	Check:    &rules.Scan{Run: runBF801},
})

// lastApplied is the annotation client-side apply (kubectl apply, Argo CD
// by default) keeps the applied manifest in.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

func runBF801(p *rules.Pass) {
	o := p.Object
	if p.Index.RunBy(o) > 0 {
		return // a Rollout runs its template; the Rollout's count is what scales
	}
	scalers := p.Index.ScalersOf(o)
	if len(scalers) == 0 {
		return
	}
	applied, ok := appliedReplicas(o)
	if !ok {
		return
	}
	r := p.Index.ReplicasOf(o)
	if applied.n >= r.Max {
		return // a reset can only scale up, and the autoscaler brings it down
	}
	app, respected := argoIgnores(p, o)
	if respected != nil {
		return // the sync keeps the live count
	}
	s := scalers[0]
	hpa, _ := s.Object.Typed.(*autoscalingv2.HorizontalPodAutoscaler)
	rulesUp, rateWhy := scaleUpRules(hpa)
	from, fromWhy := r.Max, fmt.Sprintf("the autoscaler's maximum of %d", r.Max)
	if running := o.Running(); running > applied.n {
		from, fromWhy = running, fmt.Sprintf("the %d running now (status.replicas)", running)
	}
	path, reaches := recovery(applied.n, from, rulesUp)
	syncs := len(path)
	kind := scalerKind(s)
	ev := BF801Evidence{
		Replicas: applied.n, MinReplicas: r.Min, MaxReplicas: r.Max,
		ScaledBy: kind + " " + s.Object.Name, From: from, PodsRemoved: from - applied.n,
		RecoverySyncs: syncs, RecoverySeconds: syncs * hpaSyncSeconds, ScaleUpPolicy: rateWhy,
		ReplicasFrom: applied.from,
	}
	var assumed []string
	if app != nil {
		ev.IgnoreDifferencesIn = "Application " + app.Name
	}
	if s.Object.Kind == "ScaledObject" {
		assumed = append(assumed, "KEDA's HorizontalPodAutoscaler is assumed to use the default scale-up rule: the ScaledObject's advanced.horizontalPodAutoscalerConfig.behavior is not read.")
	}

	msg := fmt.Sprintf("spec.replicas %d is fixed in what is applied while %s %s owns the count (%d to %d): every apply or sync sets it back to %d, deleting %s of %s at once",
		applied.n, kind, s.Object.Name, r.Min, r.Max, applied.n, pods(from-applied.n), fromWhy)
	if app != nil {
		msg = fmt.Sprintf("spec.replicas %d is fixed in the manifest while %s %s owns the count (%d to %d); Argo CD Application %s ignores the field when it compares, but without RespectIgnoreDifferences=true every sync still applies %d",
			applied.n, kind, s.Object.Name, r.Min, r.Max, app.Name, applied.n)
	}
	mech := []string{
		applied.what,
		fmt.Sprintf("%s %s scales %s %s between %d and %d by writing its spec.replicas (through the scale subresource); the manifest says %d, so every kubectl apply, Helm upgrade, Argo CD sync or self-heal and Flux reconcile writes %d back, as the Kubernetes autoscaling docs warn (\"Migrating Deployments and StatefulSets to horizontal autoscaling\").",
			kind, s.Object.Name, o.Kind, o.Name, r.Min, r.Max, applied.n, applied.n),
		fmt.Sprintf("At %s, the %s controller deletes %s at once: the load that made the autoscaler choose %d now lands on %d.", fromWhy, o.Kind, pods(from-applied.n), from, applied.n),
	}
	if reaches {
		mech = append(mech, fmt.Sprintf("The autoscaler notices at its next sync (every 15 s) and climbs back at %s: %s, %d syncs, about %d s below %d pods, plus the pods' start-up and readiness.",
			rateWhy, climb(applied.n, path), syncs, syncs*hpaSyncSeconds, from))
	} else {
		mech = append(mech, fmt.Sprintf("The autoscaler's scale-up is disabled (%s): it never climbs back from %d on its own.", rateWhy, applied.n))
	}
	if applied.n < r.Min {
		mech = append(mech, fmt.Sprintf("%d is below the autoscaler's minimum of %d: even at rest every sync deletes %s that the autoscaler then recreates.", applied.n, r.Min, pods(r.Min-applied.n)))
	}
	if _, ok := o.Typed.(*rolloutsv1alpha1.Rollout); ok {
		mech = append(mech, "On an Argo Rollout the reset can land during a canary: a sync that set spec.replicas 2 under an HPA minimum of 3 was seen dropping the stable ReplicaSet to zero, with downtime (argoproj/argo-rollouts#3565, v1.6.5).")
	}
	if app != nil {
		mech = append(mech, fmt.Sprintf("Application %s's ignoreDifferences keeps the drift from showing as OutOfSync, so self-heal does not fire on it; but Argo CD applies the desired state as it is at every sync (its sync-options page, \"Respect ignore differences configs\"), so the next commit's sync resets the count.", app.Name))
	}

	p.Report(rules.Report{
		Path:        field.NewPath("spec", "replicas"),
		Message:     msg,
		Mechanism:   mech,
		Evidence:    ev,
		Assumptions: assumed,
		Fix:         fixBF801(app),
	})
}

// replicasApplied is the count a sync applies, and what says so.
type replicasApplied struct {
	n int32
	// from names the source ("the manifest"); what says it in a
	// sentence of the mechanism.
	from, what string
}

// appliedReplicas says whether what is applied to the object sets
// spec.replicas. A manifest from a file does when it writes the field; an
// object read from a cluster always has one (the API server fills it in),
// so there the applier's own record counts: the last-applied annotation of
// client-side apply, or managedFields that show a manager other than the
// autoscaler's owning the field.
func appliedReplicas(o *object.Object) (replicasApplied, bool) {
	n, set := o.Replicas()
	m := o.Meta
	if v, ok := m.Annotations[lastApplied]; ok {
		var doc struct {
			Spec struct {
				Replicas *int32 `json:"replicas"`
			} `json:"spec"`
		}
		if exactjson.Unmarshal([]byte(v), &doc) != nil || doc.Spec.Replicas == nil {
			return replicasApplied{}, false
		}
		return replicasApplied{n: *doc.Spec.Replicas, from: "the last-applied-configuration annotation",
			what: fmt.Sprintf("The last-applied-configuration annotation holds spec.replicas %d: client-side apply (kubectl apply, Argo CD's default) applies it again every time.", *doc.Spec.Replicas)}, true
	}
	if len(m.ManagedFields) > 0 {
		owners := replicaOwners(o)
		if len(owners) == 0 || !set {
			return replicasApplied{}, false
		}
		return replicasApplied{n: n, from: "managedFields",
			what: fmt.Sprintf("managedFields show spec.replicas owned by %s, not only by the autoscaler: that manager sets it at every apply.", strings.Join(owners, ", "))}, true
	}
	if m.ResourceVersion != "" || m.UID != "" || !m.CreationTimestamp.IsZero() {
		// Read from a cluster without the applier's record: the API
		// server wrote the field, and what Git applies is not here.
		return replicasApplied{}, false
	}
	if !set {
		return replicasApplied{}, false
	}
	return replicasApplied{n: n, from: "the manifest", what: fmt.Sprintf("The manifest writes spec.replicas %d: what is applied fixes the count.", n)}, true
}

// replicaOwners lists the field managers of spec.replicas other than an
// autoscaler's (an update through the scale subresource, or the
// controller manager, whose HPA controller writes the count).
func replicaOwners(o *object.Object) []string {
	var out []string
	for _, e := range o.Meta.ManagedFields {
		if e.Subresource == "scale" || e.Manager == "kube-controller-manager" || e.FieldsV1 == nil {
			continue
		}
		var fs map[string]json.RawMessage
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &fs) != nil {
			continue
		}
		var spec map[string]json.RawMessage
		if json.Unmarshal(fs["f:spec"], &spec) != nil {
			continue
		}
		if _, ok := spec["f:replicas"]; ok {
			out = append(out, fmt.Sprintf("%s (%s)", e.Manager, e.Operation))
		}
	}
	return out
}

// argoIgnores finds an Argo CD Application of the input whose
// ignoreDifferences covers the object's spec.replicas. respected is that
// Application when its syncs also respect the ignore
// (RespectIgnoreDifferences=true): then a sync keeps the live count.
// covers is one that ignores the field only when comparing.
func argoIgnores(p *rules.Pass, o *object.Object) (covers, respected *object.Object) {
	for _, a := range p.Index.OfKind("Application") {
		app, ok := a.Typed.(*object.Application)
		if !ok {
			continue
		}
		if ns := app.Spec.Destination.Namespace; ns != "" && o.Namespace != "" && ns != o.Namespace {
			continue
		}
		if !slices.ContainsFunc(app.Spec.IgnoreDifferences, func(ig object.ResourceIgnore) bool { return ignoresReplicas(ig, o) }) {
			continue
		}
		respect := app.Spec.SyncPolicy != nil && slices.Contains(app.Spec.SyncPolicy.SyncOptions, "RespectIgnoreDifferences=true")
		// The resource's own sync-options annotation overrides the
		// Application's, either way.
		switch resourceSyncOption(o, "RespectIgnoreDifferences") {
		case "true":
			respect = true
		case "false":
			respect = false
		}
		if respect {
			return nil, a
		}
		if covers == nil {
			covers = a
		}
	}
	return covers, nil
}

// resourceSyncOption reads one option of the object's
// argocd.argoproj.io/sync-options annotation ("" when it does not set it).
func resourceSyncOption(o *object.Object, name string) string {
	for _, opt := range strings.Split(o.Meta.Annotations["argocd.argoproj.io/sync-options"], ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(opt), "="); ok && k == name {
			return v
		}
	}
	return ""
}

// ignoresReplicas: the entry names the object's kind (and group, name and
// namespace where it gives them) and ignores spec.replicas, by JSON
// pointer, jq path, or the autoscaler's field manager.
func ignoresReplicas(ig object.ResourceIgnore, o *object.Object) bool {
	if ig.Kind != o.Kind || (ig.Group != "" && ig.Group != o.Group()) || (ig.Name != "" && ig.Name != o.Name) || (ig.Namespace != "" && ig.Namespace != o.Namespace) {
		return false
	}
	for _, ptr := range ig.JSONPointers {
		if ptr == "/spec/replicas" || ptr == "/spec" {
			return true
		}
	}
	for _, jq := range ig.JQPathExpressions {
		if strings.TrimSpace(jq) == ".spec.replicas" {
			return true
		}
	}
	return slices.Contains(ig.ManagedFieldsManagers, "kube-controller-manager")
}

func fixBF801(app *object.Object) *finding.Fix {
	desc := []string{"Delete spec.replicas from the manifest and let the autoscaler own the count."}
	desc = append(desc, "Removing it has its own trap: with client-side apply (kubectl apply, Argo CD's default) the field is still in the last-applied-configuration annotation, so the next apply deletes it from the live object, the API server defaults it to 1, and the workload drops to 1 pod until the autoscaler reacts (the Kubernetes docs' migration note; on an Argo Rollout too, argoproj/argo-rollouts#3689). First remove it from the annotation (kubectl apply edit-last-applied), or apply server-side; with Argo CD, first add ignoreDifferences on /spec/replicas with the sync option RespectIgnoreDifferences=true, sync, then remove the field.")
	if app != nil {
		desc = append(desc, fmt.Sprintf("Or keep the field and add RespectIgnoreDifferences=true to Application %s's syncPolicy.syncOptions: syncs then keep the live count.", app.Name))
	}
	return &finding.Fix{
		Description: strings.Join(desc, " "),
		Type:        finding.StrategicMergePatch,
		Patch:       fix.At("spec", map[string]any{"replicas": nil}),
	}
}

// climb renders the counts the autoscaler passes through: "3 -> 7 -> 14 -> 20".
func climb(from int32, path []int32) string {
	steps := []string{fmt.Sprint(from)}
	for i, n := range path {
		if i > 0 && n == path[i-1] {
			continue
		}
		steps = append(steps, fmt.Sprint(n))
	}
	return strings.Join(steps, " -> ")
}

func scalerKind(s index.Scaler) string {
	if s.Object.Kind == "ScaledObject" {
		return "KEDA ScaledObject"
	}
	return "HorizontalPodAutoscaler"
}

func pods(n int32) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}
