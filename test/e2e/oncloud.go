package e2e

import (
	"slices"
	"strings"
)

// OnRealCloud are the suite's tests that `make test` runs against the cloud the operator deployed
// on the real cluster (test/realcluster, e2eOnCloud) and leaves out of its run against the
// all-in-one (LeaveToRealCloudEnv). The rest stay on the all-in-one; the README ("The resource
// suite") lists them with the reasons:
//   - tried on the deployed cloud on 2026-11-30 and failed there: TestApplicationCredential
//     (Keystone lists the role "reader" too, which "member" implies there), TestHostAggregatePlacement
//     (one compute host shared with the other tests: their servers land in the aggregate's zone
//     while it holds the host, and Nova then refuses to take the host out);
//   - too long for make test there: TestVirtualMachineResize (passed, 3 min 41 s: a real resize
//     copies the disk twice), TestOutOfBandChangeRepaired (82 cases, 7 min on the all-in-one);
//   - what failed there once and is not understood yet: TestVirtualMachineSet (a healed member
//     was replaced three times instead of once) and TestCrashBetweenCreateAndStatusWrite (passed
//     there twice since);
//   - TestDayOne (its image is random bytes labelled qcow2, which a real hypervisor cannot boot),
//     TestSamples (passed its creations there; not yet a whole run).
var OnRealCloud = []string{
	"TestDuplicateServerOfAVMIsDeleted", "TestDeletedPortTakesItsLateDuplicate", "TestFlavor",
	"TestServerGroupPlacement", "TestImageLifecycle", "TestImportDetach", "TestTwoNamespacesTwoProjects",
	"TestLongNamespaceName", "TestNamespaceDeletionRemovesEverything", "TestNetworkLifecycle",
	"TestNetworkImportUnmanaged", "TestPortWaitsForASubnet", "TestPortUpdates", "TestRBACNamespaceIsolation",
	"TestSecurityGroupRulesAsSet", "TestSubnetDependsOnNetwork", "TestVMWaitsForTheSubnetOfItsNetwork",
	"TestVirtualMachineRestartPolicyNever", "TestVirtualMachineHealedByChangesList", "TestVolumeLifecycle",
	"TestVolumeFromImage", "TestVirtualMachineLifecycle", "TestTokenAndCatalog",
	"TestRouterInterfacesAndGateway", "TestOutOfBandDeletionRepaired",
	"TestNetworkDeletionBlockedByOutsidePort", "TestProjectQuota", "TestVirtualMachineOverQuota",
	"TestPublicImage", "TestProviderNetwork", "TestImageImportPublic", "TestImportKinds",
	"TestNotificationsWakeTheVM",
}

// WithNotifications are the OnRealCloud tests run with the notification listener on, at the URL
// of the bus the life-cycle published; the others run without it, in a run of their own, so that
// TestVirtualMachineHealedByChangesList proves that the health check's changes lists alone find a
// failed server.
var WithNotifications = []string{"TestNotificationsWakeTheVM"}

// credentialsScan is the scan of everything a run of the suite logged and wrote for credentials:
// the last test of every run.
const credentialsScan = "TestNoCredentialsInStatusOrEvents"

// RealCloudRuns are the runs of the suite on the deployed cloud: OnRealCloud without
// WithNotifications and the latter, each ending with the credentials scan.
func RealCloudRuns() (listenerOff, listenerOn []string) {
	for _, name := range OnRealCloud {
		if !slices.Contains(WithNotifications, name) {
			listenerOff = append(listenerOff, name)
		}
	}
	return append(listenerOff, credentialsScan), append(slices.Clone(WithNotifications), credentialsScan)
}

// LeaveToRealCloudEnv, set to 1, makes the suite skip OnRealCloud: `make test` sets it, since its
// real-cluster suite runs those tests on the deployed cloud after this run.
const LeaveToRealCloudEnv = "KUPENSTACK_E2E_LEAVE_TO_REAL_CLOUD"

// ExactPattern matches exactly the tests named, for -test.run or -test.skip.
func ExactPattern(tests []string) string {
	return "^(" + strings.Join(tests, "|") + ")$"
}
