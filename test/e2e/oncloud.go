package e2e

import (
	"slices"
	"strings"
)

// OnRealCloud are the suite's tests that `make test` runs against the cloud the operator deployed
// on the real cluster (test/realcluster, e2eOnCloud) and leaves out of its run against the
// all-in-one (LeaveToRealCloudEnv). The rest stay on the all-in-one; the README ("The resource
// suite") lists them with the reasons:
//   - TestHostAggregatePlacement: Nova (2025.1) refuses to put a host that runs servers into an
//     availability zone (409), and the deployed cloud's one compute host runs the tenant's guests;
//   - too long for make test there: TestVirtualMachineResize (passed, 3 min 41 s: a real resize
//     copies the disk twice), TestOutOfBandChangeRepaired (82 cases, 7 min on the all-in-one).
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
	"TestApplicationCredential", "TestDayOne", "TestSamples", "TestVirtualMachineSet",
	"TestCrashBetweenCreateAndStatusWrite", "TestNotificationsWakeTheVM",
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
