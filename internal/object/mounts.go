package object

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ConfigMapFile is a file of a container that a ConfigMap volume provides.
type ConfigMapFile struct {
	ConfigMap string // the ConfigMap's name
	Key       string
}

// ConfigMapFileAt finds which ConfigMap key container c sees at file path
// p: a configMap volume mounted at p's directory (with or without items), or
// at p itself with subPath. The deepest mount wins, as in the container.
func (t *PodTemplate) ConfigMapFileAt(c *corev1.Container, p string) (ConfigMapFile, bool) {
	p = path.Clean(p)
	var best ConfigMapFile
	bestDepth := -1
	for _, vm := range c.VolumeMounts {
		mount := path.Clean(vm.MountPath)
		var rel string
		switch {
		case p == mount && vm.SubPath != "":
			rel = vm.SubPath
		case strings.HasPrefix(p, mount+"/"):
			rel = path.Join(vm.SubPath, strings.TrimPrefix(p, mount+"/"))
		default:
			continue
		}
		cm := configMapVolume(t.Spec, vm.Name)
		if cm == nil || len(mount) <= bestDepth {
			continue
		}
		key, ok := keyAt(cm, rel)
		if !ok {
			continue
		}
		best, bestDepth = ConfigMapFile{ConfigMap: cm.Name, Key: key}, len(mount)
	}
	return best, bestDepth >= 0
}

func configMapVolume(spec *corev1.PodSpec, name string) *corev1.ConfigMapVolumeSource {
	for i := range spec.Volumes {
		if v := &spec.Volumes[i]; v.Name == name {
			return v.ConfigMap
		}
	}
	return nil
}

// keyAt maps a path inside a configMap volume to the key written there.
func keyAt(cm *corev1.ConfigMapVolumeSource, rel string) (string, bool) {
	if len(cm.Items) == 0 {
		return rel, !strings.Contains(rel, "/")
	}
	for _, it := range cm.Items {
		if path.Clean(it.Path) == rel {
			return it.Key, true
		}
	}
	return "", false
}
