//go:build tools

// Package tools pins the kubelet packages the differential test drives:
// hack/test-prober.sh adds its test file to the prober package.
package tools

import (
	_ "k8s.io/client-go/util/flowcontrol"
	_ "k8s.io/kubernetes/pkg/kubelet/prober"
	_ "k8s.io/utils/clock/testing"
)
