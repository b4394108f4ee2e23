package cluster

import (
	"context"
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// RolloutOptions say which Rollout to read.
type RolloutOptions struct {
	Config    *rest.Config
	Namespace string
	Name      string
}

// RolloutState is a Rollout as its controller reads it: the Rollout with
// its status, the ReplicaSets it owns (scaled-down ones and an Experiment's
// included: the controller tells them apart), and its canary and stable
// Services.
type RolloutState struct {
	Rollout     *v1alpha1.Rollout
	ReplicaSets []*appsv1.ReplicaSet
	// Services holds the canary and stable Services that exist, by name.
	Services map[string]*corev1.Service
}

// ReadRollout reads one Rollout's state. It only ever sends GET requests.
func ReadRollout(ctx context.Context, opts RolloutOptions) (*RolloutState, error) {
	cfg := rest.CopyConfig(opts.Config)
	cfg.Wrap(readOnly)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	src := fmt.Sprintf("%s/Rollout/%s", opts.Namespace, opts.Name)
	u, err := dyn.Resource(gvr("argoproj.io", "v1alpha1", "rollouts")).Namespace(opts.Namespace).Get(ctx, opts.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	ro := &v1alpha1.Rollout{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ro); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	st := &RolloutState{Rollout: ro, Services: map[string]*corev1.Service{}}
	// The controller finds its ReplicaSets by owner (getReplicaSetsForRollouts
	// claims those its selector matches and it controls).
	opt := metav1.ListOptions{}
	if ro.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(ro.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("%s: spec.selector: %w", src, err)
		}
		opt.LabelSelector = sel.String()
	}
	for {
		list, err := cs.AppsV1().ReplicaSets(opts.Namespace).List(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("%s: list ReplicaSets: %w", src, err)
		}
		for i := range list.Items {
			rs := &list.Items[i]
			if ref := metav1.GetControllerOf(rs); ref != nil && ref.UID == ro.UID {
				st.ReplicaSets = append(st.ReplicaSets, rs)
			}
		}
		if list.Continue == "" {
			break
		}
		opt.Continue = list.Continue
	}
	if c := ro.Spec.Strategy.Canary; c != nil {
		for _, name := range []string{c.CanaryService, c.StableService} {
			if name == "" {
				continue
			}
			svc, err := cs.CoreV1().Services(opts.Namespace).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s: Service %s: %w", src, name, err)
			}
			st.Services[name] = svc
		}
	}
	return st, nil
}
