package generic

// TestScope is a Scope whose references resolve to ids ("Kind/name" → OpenStack ID), for the
// kinds' Diff table tests: Diff is pure, so it needs no clients.
func TestScope(ids map[string]string) Scope { return Scope{deps: ids} }
