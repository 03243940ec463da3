package generic

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// Name is the OpenStack name of obj: the spec's, else the object's own.
func Name(obj client.Object, specName string) string {
	if specName != "" {
		return specName
	}
	return obj.GetName()
}

// OwnerTag is the tag that marks an OpenStack resource as created for obj (by its UID), so that it
// is found again after a crash and never mistaken for another object's.
func OwnerTag(obj client.Object) string { return "kupenstack-uid-" + string(obj.GetUID()) }

// ImportMatches turns the number of resources an import-by-name filter matched into the error
// FindImport returns: none is not an error (the engine waits), more than one is.
func ImportMatches(n int, err error) error {
	if err != nil || n <= 1 {
		return err
	}
	return InvalidConfig(fmt.Sprintf("import by name matches %d resources; import by id instead", n))
}

// FindImport returns the resource spec.import names: by ID (nil when 404) or by a unique name.
func FindImport[R any](imp *kupenstackv1.ImportSpec, get func(id string) (*R, error), list func(name string) ([]R, error)) (*R, error) {
	if imp.ID != "" {
		found, err := get(imp.ID)
		if openstack.IsNotFound(err) {
			return nil, nil
		}
		return found, err
	}
	found, err := list(imp.Name)
	if err != nil || len(found) != 1 {
		return nil, ImportMatches(len(found), err)
	}
	return &found[0], nil
}

// invalidConfigError is a problem with the spec that only shows once OpenStack is asked.
type invalidConfigError struct{ msg string }

func (e invalidConfigError) Error() string { return e.msg }

// InvalidConfig returns an error that marks the object Degraded/InvalidConfiguration until its
// spec changes (it is still retried slowly).
func InvalidConfig(msg string) error { return invalidConfigError{msg} }

// IsInvalidConfig says whether err is a configuration error made by InvalidConfig.
func IsInvalidConfig(err error) bool {
	var e invalidConfigError
	return errors.As(err, &e)
}

// MaybeOurs says whether a resource found by name may be one created for obj whose owner tag
// was never set (a crash between create and tagging): it carries no owner tag at all and was
// created after obj. Neutron on Zed cannot set tags in the create call itself.
func MaybeOurs(obj client.Object, tags []string, createdAt time.Time) bool {
	for _, t := range tags {
		if strings.HasPrefix(t, "kupenstack-uid-") {
			return false
		}
	}
	// OpenStack timestamps have second precision; allow for clock skew between the two.
	return !createdAt.Before(obj.GetCreationTimestamp().Add(-time.Minute))
}

// waitError is a condition OpenStack reports that goes away by itself (or by another object's
// reconcile), such as a floating IP whose port is not routed yet.
type waitError struct {
	msg, reason string
	after       time.Duration
}

func (e waitError) Error() string { return e.msg }

// WaitFor returns an error that keeps the object Progressing with msg, and looks again after.
func WaitFor(msg string, after time.Duration) error { return waitError{msg: msg, after: after} }

// WaitForReason is WaitFor with the Progressing condition's reason (e.g. Resizing), for a wait
// users should tell apart from ordinary progress.
func WaitForReason(reason, msg string, after time.Duration) error {
	return waitError{msg: msg, reason: reason, after: after}
}

// degradedError is a failure an actuator names itself (a VM's ResizeFailed).
type degradedError struct {
	reason, msg string
	after       time.Duration
}

func (e degradedError) Error() string { return e.msg }

// Degraded returns an error that marks the object Degraded (not Progressing) with reason and msg;
// the object is looked at again after (0: only when it or its resource changes).
func Degraded(reason, msg string, after time.Duration) error {
	return degradedError{reason: reason, msg: msg, after: after}
}

// Pointers turns a slice into pointers to its elements.
func Pointers[R any](found []R, err error) ([]*R, error) {
	out := make([]*R, len(found))
	for i := range found {
		out[i] = &found[i]
	}
	return out, err
}

// Ref is the names a Dependency's Names returns for one optional reference: none when unset.
func Ref(name string) []string {
	if name == "" {
		return nil
	}
	return []string{name}
}
