package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/applicationcredential"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// appCredSecret is what the ApplicationCredential's Secret holds now: the credential's ID (from
// its annotation) and its clouds.yaml.
func appCredSecret(t *testing.T, ns, name string) (string, []byte) {
	t.Helper()
	id, doc, err := readAppCredSecret(env.Ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return id, doc
}

func readAppCredSecret(ctx context.Context, ns, name string) (string, []byte, error) {
	var s corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		return "", nil, err
	}
	return s.Annotations[applicationcredential.CredentialIDAnnotation], s.Data[applicationcredential.KeyCloudsYAML], nil
}

// withImpliedRoles is role and every role Keystone's inference rules make it imply, directly or
// through another, sorted by name.
func withImpliedRoles(t *testing.T, identity *gophercloud.ServiceClient, role string) []string {
	t.Helper()
	rules, err := roles.ListRoleInferenceRules(env.Ctx, identity).Extract()
	if err != nil {
		t.Fatalf("listing Keystone's role inference rules: %v", err)
	}
	implies := map[string][]string{}
	for _, r := range rules.RoleInferenceRuleList {
		for _, implied := range r.ImpliedRoles {
			implies[r.PriorRole.Name] = append(implies[r.PriorRole.Name], implied.Name)
		}
	}
	seen := map[string]bool{role: true}
	for next := []string{role}; len(next) > 0; {
		name := next[0]
		next = next[1:]
		for _, implied := range implies[name] {
			if !seen[implied] {
				seen[implied] = true
				next = append(next, implied)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// connectWith authenticates as a tool would, with nothing but the clouds.yaml given.
func connectWith(ctx context.Context, cloudsYAML []byte) (*gophercloud.ProviderClient, gophercloud.EndpointOpts, error) {
	auth, endpoint, tlsConfig, err := clouds.Parse(clouds.WithCloudsYAML(bytes.NewReader(cloudsYAML)),
		clouds.WithCloudName(applicationcredential.CloudName), clouds.WithLocations())
	if err != nil {
		return nil, endpoint, err
	}
	p, err := config.NewProviderClient(ctx, auth, config.WithTLSConfig(tlsConfig))
	return p, endpoint, err
}

// TestApplicationCredential, on the real cloud: the Secret's clouds.yaml authenticates with only
// the member role in the namespace's project and lists its servers, and is refused on another
// project; a rotation is seen by a probe calling Nova every 0.5 s through whatever the Secret
// holds without a single failed call; the replaced credential stops working after its grace
// period, and deleting the object revokes the last one.
func TestApplicationCredential(t *testing.T) {
	parallel(t)
	requireCloud(t)
	adminProvider, adminCloud := connect(t)
	ctx := env.Ctx

	ns := newNamespace(t)
	other := newNamespace(t)
	_, otherSeed := projectOf(t, other)
	waitReady(t, otherSeed)
	otherProject := projectID(t, other)

	a := &kupenstackv1.ApplicationCredential{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tools"},
		Spec: kupenstackv1.ApplicationCredentialSpec{ // Longer than one probe call takes on the loaded shared machine (a token and a list).
			RevokeGracePeriod: &kupenstackv1.Duration{Duration: 10 * time.Second}}}
	create(t, a)
	waitAppCred := func(what string, check func(*kupenstackv1.ApplicationCredential) error) *kupenstackv1.ApplicationCredential {
		t.Helper()
		eventually(t, what, func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
				return err
			}
			if !conditions.IsReady(a.Status.Conditions, a.Generation) || a.Status.Current == nil {
				return fmt.Errorf("not ready: %+v", a.Status.Conditions)
			}
			return check(a)
		})
		return a
	}
	waitAppCred("ready", func(*kupenstackv1.ApplicationCredential) error { return nil })
	project := projectID(t, ns)
	firstID, firstYAML := appCredSecret(t, ns, "tools")
	if firstID != a.Status.Current.ID {
		t.Fatalf("Secret holds %s, status %s", firstID, a.Status.Current.ID)
	}

	// Keystone's view: restricted, member only, in the namespace's project.
	adminIdentity, err := gcopenstack.NewIdentityV3(adminProvider, adminCloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	adminUser, err := adminProvider.GetAuthResult().(tokens.CreateResult).ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	kc, err := applicationcredentials.Get(ctx, adminIdentity, adminUser.ID, firstID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	// Newer Keystones list the credential's roles with those they imply (the default roles have
	// member imply reader), older ones without: member, and nothing member does not imply.
	allowed := withImpliedRoles(t, adminIdentity, "member")
	var got []string
	for _, r := range kc.Roles {
		got = append(got, r.Name)
	}
	beyond := slices.ContainsFunc(got, func(name string) bool { return !slices.Contains(allowed, name) })
	if kc.Unrestricted || kc.ProjectID != project || !slices.Contains(got, "member") || beyond {
		t.Errorf("Keystone has unrestricted=%v project %s roles %v, want restricted, %s, member and at most what it implies (%v)",
			kc.Unrestricted, kc.ProjectID, got, project, allowed)
	}

	// A tool with the Secret's clouds.yaml: scoped to the namespace's project, without admin.
	tool, endpoint, err := connectWith(ctx, firstYAML)
	if err != nil {
		t.Fatalf("authenticating with the Secret's clouds.yaml: %v", err)
	}
	result := tool.GetAuthResult().(tokens.CreateResult)
	if p, err := result.ExtractProject(); err != nil || p.ID != project {
		t.Errorf("token project %+v (%v), want %s", p, err, project)
	}
	if roles, err := result.ExtractRoles(); err != nil {
		t.Error(err)
	} else {
		for _, r := range roles {
			if r.Name == "admin" {
				t.Errorf("the credential's token has the admin role: %+v", roles)
			}
		}
	}
	nova, err := gcopenstack.NewComputeV2(tool, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := servers.List(nova, servers.ListOpts{}).AllPages(ctx); err != nil {
		t.Errorf("listing the project's servers: %v", err)
	}
	// Refused on another project: Nova's other-project listing, another project's network, and
	// a token for another project's scope.
	_, err = servers.List(nova, servers.ListOpts{AllTenants: true, TenantID: otherProject}).AllPages(ctx)
	if !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Errorf("listing another project's servers: %v, want 403", err)
	}
	neutron, err := gcopenstack.NewNetworkV2(tool, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := networks.Get(ctx, neutron, otherSeed.Status.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("reading another project's network: %v, want 404", err)
	}
	scoped := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"application_credential"}, "application_credential": map[string]any{
			"id": firstID, "secret": appCredSecretValue(t, firstYAML)}},
		"scope": map[string]any{"project": map[string]any{"id": otherProject}},
	}}
	keystone, err := gcopenstack.NewIdentityV3(tool, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keystone.Post(ctx, keystone.ServiceURL("auth", "tokens"), scoped, nil,
		&gophercloud.RequestOpts{OkCodes: []int{201}, OmitHeaders: []string{"X-Auth-Token"}}); !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
		t.Errorf("a token for another project: %v, want 401", err)
	}

	// Rotation under a probe: every 0.5 s, a call through the credential the Secret holds now.
	probeCtx, stopProbe := context.WithCancel(ctx)
	var mu sync.Mutex
	var failures []string
	usedIDs := map[string]int{}
	var probeDone sync.WaitGroup
	probeDone.Add(1)
	go func() {
		defer probeDone.Done()
		var cachedID string
		var cached *gophercloud.ServiceClient
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-probeCtx.Done():
				return
			case <-tick.C:
			}
			callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			var id string
			err := func() error {
				var doc []byte
				var err error
				if id, doc, err = readAppCredSecret(callCtx, ns, "tools"); err != nil {
					return err
				}
				if id != cachedID { // a tool rereads the Secret and reconnects when it changed
					p, ep, err := connectWith(callCtx, doc)
					if err != nil {
						return err
					}
					if cached, err = gcopenstack.NewComputeV2(p, ep); err != nil {
						return err
					}
					cachedID = id
				}
				_, err = servers.List(cached, servers.ListOpts{}).AllPages(callCtx)
				return err
			}()
			cancel()
			mu.Lock()
			if err != nil && probeCtx.Err() == nil {
				failures = append(failures, fmt.Sprintf("%s with %s: %v", time.Now().Format(time.RFC3339Nano), id, err))
			}
			usedIDs[id]++
			mu.Unlock()
		}
	}()
	callsWith := func(what string, n int, id func() string) {
		t.Helper()
		eventually(t, what, func() error {
			mu.Lock()
			defer mu.Unlock()
			if got := usedIDs[id()]; got < n {
				return fmt.Errorf("%d calls with %s so far", got, id())
			}
			return nil
		})
	}
	callsWith("probe calls with the first credential", 3, func() string { return firstID })
	updateSpec(t, a, func(a *kupenstackv1.ApplicationCredential) { a.Spec.Rotation = "1" })
	waitAppCred("rotated, the old credential revoked", func(a *kupenstackv1.ApplicationCredential) error {
		if a.Status.Current.ID == firstID || len(a.Status.Previous) > 0 {
			return fmt.Errorf("current %s previous %+v", a.Status.Current.ID, a.Status.Previous)
		}
		return nil
	})
	secondID, secondYAML := appCredSecret(t, ns, "tools")
	mu.Lock()
	afterRevocation := usedIDs[secondID]
	mu.Unlock()
	callsWith("probe calls after the revocation", afterRevocation+3, func() string { return secondID })
	stopProbe()
	probeDone.Wait()
	mu.Lock()
	if len(failures) > 0 {
		t.Errorf("%d failed calls during the rotation: %q", len(failures), failures)
	}
	t.Logf("probe calls by credential: %v", usedIDs)
	mu.Unlock()
	if secondID != a.Status.Current.ID || a.Status.LastRotationTime == nil {
		t.Errorf("Secret holds %s, status %+v", secondID, a.Status)
	}
	if _, _, err := connectWith(ctx, firstYAML); !refused(err) {
		t.Errorf("the replaced credential after its grace period: %v, want it refused", err)
	}

	// The secrets are in the Secret only: not in the object, its Events or the operator's log.
	objJSON, _ := json.Marshal(a)
	var events eventsv1.EventList
	if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	notes, log := "", operatorLog.String()
	for _, e := range events.Items {
		notes += e.Reason + ": " + e.Note + "\n"
	}
	for _, secret := range []string{appCredSecretValue(t, firstYAML), appCredSecretValue(t, secondYAML)} {
		if len(secret) < 16 || strings.Contains(string(objJSON), secret) || strings.Contains(notes, secret) || strings.Contains(log, secret) {
			t.Errorf("an application credential secret (%d characters) is in the object, an Event or the log", len(secret))
		}
	}

	// Deleting the object revokes the current credential; its Secret goes with it.
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	waitGone(t, a)
	if _, _, err := connectWith(ctx, secondYAML); !refused(err) {
		t.Errorf("the credential after the object was deleted: %v, want it refused", err)
	}
	waitGone(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tools"}})
	if err := env.Client.Delete(ctx, otherSeed); err != nil {
		t.Fatal(err)
	}
	waitGone(t, otherSeed)
	deleteProject(t, ns) // no credential is left to keep it
	deleteProject(t, other)
}

// appCredSecretValue is the application credential secret in a clouds.yaml.
func appCredSecretValue(t *testing.T, cloudsYAML []byte) string {
	t.Helper()
	auth, _, _, err := clouds.Parse(clouds.WithCloudsYAML(bytes.NewReader(cloudsYAML)),
		clouds.WithCloudName(applicationcredential.CloudName), clouds.WithLocations())
	if err != nil {
		t.Fatal(err)
	}
	return auth.ApplicationCredentialSecret
}

// refused says whether Keystone refused a credential: 404 for one that no longer exists
// (Keystone names it "Could not find Application Credential"), 401 for a wrong secret.
func refused(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusNotFound) || gophercloud.ResponseCodeIs(err, http.StatusUnauthorized)
}
