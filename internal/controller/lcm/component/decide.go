package component

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/release"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// decide picks the one action for what is observed. It is pure: everything it needs is in the
// observation, the component (spec, annotations, status) and now.
//
//	gate (suspended, no configuration, not enabled, stale spec)  -> wait
//	no revision ever deployed:
//	  its hash failed before, no new retry annotation             -> blocked (InstallFailed)
//	  a prerequisite object (Ceph's client configuration) missing -> wait
//	  dependencies not ready                                     -> wait (WaitingForDependencies)
//	  a failed install left behind                                -> reinstall
//	  else                                                        -> install
//	newest revision made of another hash, or not deployed:
//	  its hash failed before, no new retry annotation             -> blocked (UpgradeFailed)
//	  a prerequisite object missing                               -> wait
//	  dependencies (release upgrade: earlier phases) not ready    -> wait (WaitingForDependencies)
//	  else                                                        -> upgrade (roll back if it fails)
//	in sync                                                       -> judge the newest revision
//
// and, once a revision's objects are observed, decideJudged gives the verdict.
func decide(o *observation, comp *kupenstackv1.OpenstackComponent, now time.Time) action {
	switch {
	case o.suspended:
		return wait{message: "suspended: no Helm action until spec.suspend is false", ready: conditions.IsReady(comp.Status.Conditions, comp.Generation)}
	case o.noConfig:
		return wait{message: "no KupenstackConfiguration"}
	case o.notEnabled:
		return wait{message: "the configuration does not enable this component"}
	case o.stale:
		return wait{message: "waiting for the configuration controller to update this component", requeue: time.Second}
	case o.workloads != nil:
		return decideJudged(o, comp, now)
	}
	st := &comp.Status
	retry := comp.Annotations[kupenstackv1.AnnotationRetry] != "" && comp.Annotations[kupenstackv1.AnnotationRetry] != st.RetriedWith
	// The same inputs are not tried again after they failed, until a retry is asked for.
	blockedHash := o.hash == st.FailedHash && !retry
	switch {
	case o.deployed == nil:
		if blockedHash {
			return blocked{reason: kupenstackv1.ReasonInstallFailed, message: st.LastError + " (set the " + kupenstackv1.AnnotationRetry + " annotation to retry)"}
		}
		if why := pendingBeforeAction(o, comp, false); why != "" {
			return wait{message: why, requeue: waitingPeriod, phase: kupenstackv1.ComponentPhaseWaiting}
		}
		if o.last != nil { // an install that failed: start again from nothing
			return reinstall{install{retry: retry}}
		}
		return install{retry: retry}
	case o.last.Labels[labelHash] != o.hash || o.last.Info.Status != release.StatusDeployed:
		if blockedHash {
			return blocked{reason: kupenstackv1.ReasonUpgradeFailed, message: st.LastError + " (change the configuration or set the " + kupenstackv1.AnnotationRetry + " annotation to retry)"}
		}
		releaseUpgrade := o.deployed.Labels[labelRelease] != comp.Spec.Release
		if why := pendingBeforeAction(o, comp, releaseUpgrade); why != "" {
			return wait{message: why, requeue: waitingPeriod, phase: kupenstackv1.ComponentPhaseWaiting}
		}
		target := int(st.LastGoodRevision)
		if target == 0 {
			target = o.deployed.Version
		}
		return upgrade{retry: retry, rollbackTo: target}
	default:
		return judge{}
	}
}

// decideJudged gives the verdict on a revision whose objects were observed:
//
//	objects deleted or changed by hand:
//	  a prerequisite object missing                            -> wait (names it)
//	  the same repaired maxRepairs times within the hold-off   -> blocked (DriftNotRepaired)
//	  else                                                     -> repair
//	a workload failed                                          -> blocked (WorkloadFailed)
//	workloads not ready:
//	  past the deadline, a last good revision made otherwise   -> roll back to it
//	  past the deadline, nothing better to go back to          -> blocked (ProgressDeadlineExceeded)
//	  else                                                     -> wait (Deploying; names a missing prerequisite first)
//	all ready                                                  -> ready
func decideJudged(o *observation, comp *kupenstackv1.OpenstackComponent, now time.Time) action {
	sum, rel, st := o.workloads, o.judged, &comp.Status
	if len(sum.Missing) > 0 || len(sum.Modified) > 0 {
		names := make([]string, 0, len(sum.Missing)+len(sum.Modified))
		for _, m := range sum.Missing {
			names = append(names, m.String())
		}
		names = append(names, sum.Modified...)
		what := strings.Join(names, ", ")
		if o.missing != "" {
			// The restored objects' pods and the charts' hook Jobs would hang on it.
			return wait{message: o.missing + " before restoring " + what, requeue: waitingPeriod}
		}
		restart := what != o.repair.what || now.Sub(o.repair.since) > repairHoldoff*o.readyPeriod
		if !restart && o.repair.count >= maxRepairs {
			// The repairs do not hold (something else keeps changing these objects): another
			// upgrade now would only add a revision per pass; try again after the hold-off.
			return blocked{reason: kupenstackv1.ReasonDriftNotRepaired, message: "changed again right after being restored: " + what,
				phase: kupenstackv1.ComponentPhaseFailed, lastError: true, requeue: o.readyPeriod}
		}
		return repair{objects: names, restart: restart}
	}
	if len(sum.Failed) > 0 {
		return blocked{reason: kupenstackv1.ReasonWorkloadFailed, message: strings.Join(sum.Failed, "; "),
			phase: kupenstackv1.ComponentPhaseFailed, lastError: true, requeue: waitingPeriod}
	}
	if len(sum.NotReady) > 0 {
		waiting := "waiting for " + strings.Join(first(sum.NotReady, 3), "; ")
		if o.missing != "" { // the likely cause: pods cannot mount it
			waiting = o.missing + "; " + waiting
		}
		// The deadline is for a revision's first rollout; a revision that was ready once and
		// lost a pod since is just waited for.
		started := st.LastActionTime
		if o.deadline > 0 && started != nil && now.Sub(started.Time) > o.deadline && int32(rel.Version) != st.LastGoodRevision {
			return deadlineExceeded(o, comp, rel, waiting)
		}
		return wait{message: waiting, requeue: deployingPeriod, phase: kupenstackv1.ComponentPhaseDeploying}
	}
	return ready{}
}

// deadlineExceeded handles a revision whose workloads did not become ready within the progress
// deadline: one that changed what the last good revision was made of is rolled back to it like a
// failed upgrade; otherwise (a first install, a repair) there is nothing better to go back to,
// so it is reported and still waited for.
func deadlineExceeded(o *observation, comp *kupenstackv1.OpenstackComponent, rel *release.Release, waiting string) action {
	msg := fmt.Sprintf("revision %d not ready within the progress deadline of %s: %s", rel.Version, o.deadline, waiting)
	for _, good := range o.history {
		if int32(good.Version) == comp.Status.LastGoodRevision && good.Version != rel.Version && good.Labels[labelHash] != rel.Labels[labelHash] {
			return rollBack{target: good.Version, hash: rel.Labels[labelHash], cause: flatten(msg)}
		}
	}
	return blocked{reason: kupenstackv1.ReasonProgressDeadlineExceeded, message: msg,
		phase: kupenstackv1.ComponentPhaseDeploying, requeue: deployingPeriod}
}

// pendingBeforeAction says what a Helm action waits for: a missing prerequisite object first
// (its pods would hang on it), then the dependencies (a release upgrade: the earlier phases).
func pendingBeforeAction(o *observation, comp *kupenstackv1.OpenstackComponent, releaseUpgrade bool) string {
	if o.missing != "" {
		return o.missing
	}
	return dependenciesPending(comp, o.components, o.componentsErr, releaseUpgrade)
}

// dependenciesPending says what the component waits for before a Helm action, or "". For a
// release upgrade, every component of an earlier upgrade phase must also run the new release
// and be ready.
func dependenciesPending(comp *kupenstackv1.OpenstackComponent, all []kupenstackv1.OpenstackComponent, listErr error, releaseUpgrade bool) string {
	if listErr != nil {
		return "listing components: " + listErr.Error()
	}
	byName := map[string]*kupenstackv1.OpenstackComponent{}
	for i := range all {
		byName[all[i].Name] = &all[i]
	}
	var waiting []string
	for _, d := range comp.Spec.DependsOn {
		dep, ok := byName[d]
		if !ok || !isReady(dep) {
			waiting = append(waiting, d)
		}
	}
	if len(waiting) > 0 {
		return "waiting for dependencies: " + strings.Join(waiting, ", ")
	}
	if !releaseUpgrade {
		return ""
	}
	for _, c := range all {
		if c.Spec.UpgradePhase < comp.Spec.UpgradePhase && (c.Status.Release != comp.Spec.Release || !isReady(&c)) {
			waiting = append(waiting, c.Name)
		}
	}
	slices.Sort(waiting)
	if len(waiting) > 0 {
		return fmt.Sprintf("release upgrade to %s: waiting for the earlier phases: %s", comp.Spec.Release, strings.Join(waiting, ", "))
	}
	return ""
}

func isReady(c *kupenstackv1.OpenstackComponent) bool {
	return c.Status.Phase == kupenstackv1.ComponentPhaseReady && conditions.IsReady(c.Status.Conditions, c.Generation)
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
	}
	return s
}
