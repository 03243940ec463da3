package depcheck

import (
	"context"
)

// Container waits until another container of this pod is ready.
type Container struct{ Name string }

func (c Container) String() string { return "Container " + c.Name }

func (c Container) Check(ctx context.Context, e *Env) (string, error) {
	pod, err := e.ownPod(ctx)
	if err != nil {
		return "", err
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name != c.Name {
			continue
		}
		if s.Ready {
			return "", nil
		}
		if s.State.Running == nil {
			return "not running", nil
		}
		return "running, not ready", nil
	}
	return "no status for it in pod " + e.PodName + " yet", nil
}
