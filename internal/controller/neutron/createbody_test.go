package neutron

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
)

// neutronAnswering is a Neutron endpoint whose extension call for tag-creation answers with the
// next of codes (the last one again once they run out); it counts the calls.
func neutronAnswering(t *testing.T, codes ...int) (*gophercloud.ServiceClient, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2.0/extensions/tag-creation" {
			t.Errorf("unexpected call %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		n := int(calls.Add(1))
		code := codes[min(n, len(codes))-1]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code == http.StatusOK {
			_, _ = w.Write([]byte(`{"extension": {"alias": "tag-creation", "name": "Tag support for resources during creation"}}`))
		}
	}))
	t.Cleanup(srv.Close)
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{HTTPClient: *srv.Client()},
		Endpoint: srv.URL + "/", ResourceBase: srv.URL + "/v2.0/"}
	return sc, &calls
}

// TestCreateBody: the owner's tags go into the create request only where Neutron has the
// tag-creation extension; the answer is remembered per endpoint, an error is not.
func TestCreateBody(t *testing.T) {
	tags := []string{"kupenstack-uid-u1", "team-a"}
	build := networks.CreateOpts{Name: "private"}.ToNetworkCreateMap
	for _, tc := range []struct {
		name      string
		codes     []int
		wantTags  []string
		wantErr   []bool // per create
		wantCalls int32  // extension calls after all creates
	}{
		{name: "2025.1: tag-creation", codes: []int{200}, wantTags: tags, wantErr: []bool{false, false}, wantCalls: 1},
		{name: "Zed: no tag-creation", codes: []int{404}, wantErr: []bool{false, false}, wantCalls: 1},
		{name: "Neutron failing, then answering", codes: []int{503, 200}, wantTags: tags, wantErr: []bool{true, false, false}, wantCalls: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, calls := neutronAnswering(t, tc.codes...)
			for i, wantErr := range tc.wantErr {
				body, err := CreateBody(context.Background(), sc, "network", build, tags)
				if (err != nil) != wantErr {
					t.Fatalf("create %d: err = %v, want an error: %v", i, err, wantErr)
				}
				if err != nil {
					continue
				}
				network := body["network"].(map[string]any)
				got, _ := network["tags"].([]string)
				if !slices.Equal(got, tc.wantTags) || network["name"] != "private" {
					t.Errorf("create %d: body %v, want the name and tags %v", i, body, tc.wantTags)
				}
			}
			if calls.Load() != tc.wantCalls {
				t.Errorf("%d extension calls, want %d", calls.Load(), tc.wantCalls)
			}
		})
	}
}

// TestCreateBodyWithoutTheResource: a body whose resource is under another key is an error, not
// a panic or a create without the tags.
func TestCreateBodyWithoutTheResource(t *testing.T) {
	sc, _ := neutronAnswering(t, 200)
	build := networks.CreateOpts{Name: "private"}.ToNetworkCreateMap
	if _, err := CreateBody(context.Background(), sc, "port", build, []string{"a"}); err == nil {
		t.Fatal("a network's body was taken for a port's")
	}
}
