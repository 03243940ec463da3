package v1alpha1

// Condition types shared by every KupenStack kind. Ready says whether the thing the object
// declares exists and works; Progressing whether the operator still has work to do for the
// current generation; Degraded whether something is wrong that needs attention.
const (
	ConditionReady       = "Ready"
	ConditionProgressing = "Progressing"
	ConditionDegraded    = "Degraded"
)

// Condition reasons. They tell the user what to do, in the way HTTP status codes do.
const (
	// ReasonSuccess: nothing left to do.
	ReasonSuccess = "Success"
	// ReasonProgressing: work is under way or waiting on something that will happen by itself.
	ReasonProgressing = "Progressing"
	// ReasonDeletionBlocked: a deletion waits until nothing uses the resource any more: objects
	// that refer to it, or whatever else OpenStack names when it refuses the deletion (409, in
	// use). It goes on by itself once they are gone.
	ReasonDeletionBlocked = "DeletionBlocked"
	// ReasonTransientError: an error that is retried with backoff; no action needed unless it persists.
	ReasonTransientError = "TransientError"
	// ReasonInvalidConfiguration: the spec cannot work as written; the user must change it.
	ReasonInvalidConfiguration = "InvalidConfiguration"
	// ReasonUnrecoverableError: the operator cannot continue without outside help.
	ReasonUnrecoverableError = "UnrecoverableError"
	// ReasonResizing: a VirtualMachine's server is being resized to a new flavor.
	ReasonResizing = "Resizing"
	// ReasonResizeFailed: Nova refused or failed a VirtualMachine's resize; the server stays on
	// its old flavor until the spec changes (to another flavor, or back).
	ReasonResizeFailed = "ResizeFailed"
	// ReasonDriftNotRepairable: a field was changed in OpenStack to a value OpenStack cannot
	// change back without re-creating the resource (a volume grown out of band cannot shrink);
	// the object stays Degraded until its spec accepts the new value or the resource is replaced.
	ReasonDriftNotRepairable = "DriftNotRepairable"
)
