package controller

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// lcmStarter starts the life-cycle controllers when the first KupenstackConfiguration appears
// (--lcm=auto with none at start-up), so that creating one is all it takes to deploy a cloud:
// no operator restart. It runs in the leader only, as the controllers do; a replica that becomes
// leader later finds the configuration in its informer's first list.
type lcmStarter struct {
	cache cache.Cache
	start func() error
}

func (s *lcmStarter) Start(ctx context.Context) error {
	informer, err := s.cache.GetInformer(ctx, &kupenstackv1.KupenstackConfiguration{})
	if err != nil {
		return fmt.Errorf("watching KupenstackConfigurations: %w", err)
	}
	created := make(chan string, 1)
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if c, ok := obj.(*kupenstackv1.KupenstackConfiguration); ok {
			select {
			case created <- c.Name:
			default:
			}
		}
	}})
	if err != nil {
		return fmt.Errorf("watching KupenstackConfigurations: %w", err)
	}
	defer func() { _ = informer.RemoveEventHandler(reg) }()
	select {
	case <-ctx.Done():
		return nil
	case name := <-created:
		ctrl.Log.WithName("setup").Info("life-cycle controllers on: a KupenstackConfiguration was created", "name", name)
		return s.start()
	}
}
