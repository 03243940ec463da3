# KupenStack developer entry points. `make help` lists them.
SHELL := /usr/bin/env bash -o pipefail -ec
.DEFAULT_GOAL := help

# Pinned tool versions (hack/install-test-tools.sh builds them from the Go module proxy).
K8S_VERSION ?= v1.37.2
CONTROLLER_GEN_VERSION ?= v0.23.0
export K8S_VERSION CONTROLLER_GEN_VERSION

BIN := $(CURDIR)/bin
CHART := charts/kupenstack
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
ENVTEST_ASSETS := $(BIN)/envtest-$(K8S_VERSION)
AIO_STATE_DIR ?= /var/lib/kupenstack/openstack-aio
export AIO_STATE_DIR

GO_TEST_FLAGS ?= -count=1 -timeout 40m
# The real cluster's suites make test runs (go test -run): the cluster and the host comparison,
# the operator from its chart, the whole cloud deployed by the operator from the real charts
# (TestFirstDeployment, four components of it, is left to make test-real-cluster).
REAL_CLUSTER_TESTS ?= TestRealCluster|TestOperatorChart|TestWholeCloud
# The longest packages of make test's main go test, started first (go test starts packages in the
# order given): test/e2e, alone longer than the others side by side, no longer starts last.
SLOWEST_PACKAGES := ./test/e2e ./internal/controller/lcm/component ./internal/lcm/drift ./internal/controller/lcm ./test/lcmcrash
# make render: the sample cloud through the real OpenStack-Helm charts of its release (beside the checkout) unless told otherwise.
RENDER_FILES ?= config/samples/lcm/cloud.yaml
RENDER_CHARTS ?= ../shared/openstack-helm/2026.1.0
# The environment every real test needs: the envtest binaries and the all-in-one cloud.
TEST_ENV := KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) OS_CLIENT_CONFIG_FILE=$(AIO_STATE_DIR)/clouds.yaml OS_CLOUD=aio \
	KUPENSTACK_NOTIFICATIONS_URL=amqp://guest:guest@127.0.0.1:5672/

##@ General
.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC into config/.
	$(CONTROLLER_GEN) crd rbac:roleName=kupenstack-manager paths=./api/... paths=./internal/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: chart
chart: manifests ## Copy the generated CRDs, ClusterRole rules and tenant roles into the Helm chart (charts/kupenstack).
	rm -f $(CHART)/crds/*.yaml
	cp config/crd/bases/*.yaml $(CHART)/crds/
	cp config/rbac/role.yaml $(CHART)/files/clusterrole.yaml
	cp config/rbac/tenant_view_role.yaml config/rbac/tenant_edit_role.yaml $(CHART)/files/

.PHONY: verify
verify: generate manifests chart ## Fail when generated files are stale, code is not gofmt'ed or go vet complains.
	@git diff --exit-code -- api config $(CHART) || { echo "generated files are stale: run 'make generate manifests chart' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- api config $(CHART))" || { git status --porcelain -- api config $(CHART); echo "untracked generated files: commit them" >&2; exit 1; }
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed on the files above" >&2; exit 1; }
	go vet ./...

.PHONY: build
build: ## Build the operator into bin/kupenstack.
	go build -o $(BIN)/kupenstack ./cmd/kupenstack

# The image config/manager and the chart's values.yaml name by default.
IMG ?= ghcr.io/kupenstack/kupenstack:latest
# docker or podman, whichever is installed.
CONTAINER_TOOL ?= $(shell command -v docker || command -v podman)
.PHONY: docker-build
docker-build: ## Build the operator's container image IMG (needs docker or podman; not used by the tests).
	@test -n "$(CONTAINER_TOOL)" || { echo "docker-build: no container engine found: install docker or podman, or set CONTAINER_TOOL" >&2; exit 1; }
	@# A client without its daemon (no /var/run/docker.sock) is no engine either.
	@$(CONTAINER_TOOL) info >/dev/null 2>&1 || { echo "docker-build: $(CONTAINER_TOOL) is installed but its engine does not answer ('$(CONTAINER_TOOL) info' fails)" >&2; exit 1; }
	$(CONTAINER_TOOL) build -t $(IMG) .

##@ Test
# make test's time budget, in minutes from its start (TEST_BUDGET=0: none). CI stops a run at 90
# minutes and keeps nothing of it, and on two cores everything takes 75-100 minutes warm, more
# cold. What must pass always runs: the tools, verify, the Go suites (with every resource-suite
# case on the all-in-one) and the reliability suite. The real cluster's tests and the whole
# cloud's steps (test/realcluster/budget_test.go) and fuzz start only when they fit, and make
# test ends with the list of what it left out ($(BIN)/test-skipped.txt).
TEST_BUDGET ?= 78
TEST_SKIPPED := $(BIN)/test-skipped.txt
.PHONY: test
test: export KUPENSTACK_TEST_DEADLINE := $(if $(filter-out 0,$(TEST_BUDGET)),$(shell echo $$(( $$(date +%s) + $(TEST_BUDGET) * 60 ))))
test: export KUPENSTACK_TEST_SKIPPED := $(TEST_SKIPPED)
test: ## Everything within TEST_BUDGET minutes: unit, envtest and e2e (against the all-in-one cloud, started if needed), then the real cluster's suites (root) beside the reliability suite and fuzz.
	@mkdir -p $(BIN); rm -f $(TEST_SKIPPED)
	@# The real cluster's tools build with the others, its images in the background (bin/images-prebuild.log).
	PREPARE_REAL_CLUSTER=1 hack/prepare-tests.sh
	@$(MAKE) --no-print-directory verify
	@# The deployed cloud runs the resource suite's cases it can, and the all-in-one the rest, when
	@# that cloud surely runs (hack/budget.sh leave-to-cloud): without a budget, or with every image
	@# cached and CLOUD_TAKES_SUITE_NEEDS left. Otherwise the all-in-one runs them all.
	@leave=$$(hack/budget.sh leave-to-cloud $(CLOUD_TAKES_SUITE_NEEDS) '$(REAL_CLUSTER_TESTS)'); \
	  echo "$$leave" > $(BIN)/leave-to-real-cloud; \
	  $(MAKE) --no-print-directory test-suites PREPARED=1 LEAVE_TO_REAL_CLOUD=$$leave
	@# The real cluster's suites leave about half of the machine's CPU idle while the cloud works
	@# (vmstat over a whole run, 2026-11-29), the reliability suite and fuzz about 40 % busy: they run
	@# side by side, the real cluster's lines marked [cloud]. Both run to their end, so a failure in
	@# one still reports the other. test-suites, 80 % busy alone, runs before them: beside the
	@# cloud's install it slowed both by half and an e2e case ran out of time (docs/benchmarks.md, section 8).
	@# TestWholeCloud, told the cases were left to it, runs them whatever the budget says by then.
	@set +e; \
	  KUPENSTACK_E2E_LEAVE_TO_REAL_CLOUD=$$(cat $(BIN)/leave-to-real-cloud) \
	  $(MAKE) --no-print-directory test-real-cluster RUN='$(REAL_CLUSTER_TESTS)' 2>&1 | sed -u 's/^/[cloud] /' & cloud=$$!; \
	  KUPENSTACK_E2E=required $(TEST_ENV) go test $(GO_TEST_FLAGS) ./test/reliability/ && \
	    if hack/budget.sh fits $(FUZZ_NEEDS) "make fuzz"; then $(MAKE) --no-print-directory fuzz; fi; beside=$$?; \
	  wait $$cloud; cloud=$$?; \
	  echo "make test: the reliability suite and fuzz exited $$beside, the real cluster's suites $$cloud"; \
	  hack/budget.sh report $(TEST_BUDGET); \
	  [ $$beside = 0 ] && [ $$cloud = 0 ]

.PHONY: test-suites
test-suites: ## Unit, envtest and the resource suite on the all-in-one (make test's first part; no real cluster, no reliability suite).
	$(if $(PREPARED),@: prepared by make test,hack/prepare-tests.sh)
	@# LEAVE_TO_REAL_CLOUD=1 (make test without a budget): the resource suite's cases the real cluster's suite runs on the deployed cloud are not run on the all-in-one too.
	@# test/realcluster here runs its table tests; its cluster tests skip without KUPENSTACK_REAL_CLUSTER.
	@# test/e2e writes its slowest tests to $(BIN)/e2e-times.txt (a passing package's output is not shown).
	@# test/reliability runs apart: it stops neutron-server for a minute, which other packages' tests would see.
	@rm -f $(BIN)/e2e-times.txt
	slowest=$$(go list $(SLOWEST_PACKAGES)); KUPENSTACK_REAL_CLUSTER= KUPENSTACK_E2E=required KUPENSTACK_E2E_LEAVE_TO_REAL_CLOUD=$(LEAVE_TO_REAL_CLOUD) KUPENSTACK_E2E_TIMES=$(abspath $(BIN))/e2e-times.txt \
		$(TEST_ENV) go test $(GO_TEST_FLAGS) $$slowest $$(go list ./... | grep -v -e /test/reliability | grep -vxF "$$slowest")
	@cat $(BIN)/e2e-times.txt 2>/dev/null || true

.PHONY: test-reliability
test-reliability: ## The reliability suite alone: SIGKILLs, OpenStack faults through a proxy, Neutron stopped 60 s (make test runs it too).
	hack/prepare-tests.sh
	KUPENSTACK_E2E=required $(TEST_ENV) go test -count=1 -v -timeout 30m ./test/reliability/

.PHONY: test-unit
test-unit: ## The fast part only: no API server, no cloud.
	go test -short $(GO_TEST_FLAGS) ./...

# A count of inputs, not a duration: Go 1.26's fuzz coordinator can fail a target with "context
# deadline exceeded" when a duration runs out while a worker is busy (go.dev/issue/75804, fixed in
# Go 1.27; it failed FuzzMerge in a CI run here). 50000 inputs took 5-35 s a target, 3 min 40 s for
# all; 20000 each fits make test's budget (FUZZ_TIME=2m make fuzz for a longer look).
FUZZ_TIME ?= 20000x
# What must fit, in seconds, when make test starts its Go suites, for the resource suite's cases
# the deployed cloud runs to be left to it: the Go suites (11-24 min measured, 20 taken), the
# cloud's install (22), the suite on it (16) and its teardown (5), as in test/realcluster/budget_test.go.
CLOUD_TAKES_SUITE_NEEDS := 3780
# What make fuzz takes at most in make test, in seconds (2-9 min 22 s measured, cold builds included).
FUZZ_NEEDS := 600
.PHONY: fuzz
fuzz: ## Run every fuzz target briefly (FUZZ_TIME each: a count of inputs, or a duration).
	@grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sed 's|^\(.*\)/[^/]*:func |\1 |' | \
	while read -r dir fn; do echo "fuzz $$dir $$fn"; go test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZ_TIME) "$$dir" </dev/null || exit 1; done

.PHONY: tools
tools: ## Build the test binaries (kube-apiserver, etcd, kubectl, kube-controller-manager, kube-scheduler, kwok) and controller-gen into bin/.
	hack/install-test-tools.sh envtest cluster codegen

$(CONTROLLER_GEN):
	hack/install-test-tools.sh codegen

# make bench N=200: how many VMs the convergence benchmark creates.
N ?= 50
# BENCH_OUT=/tmp/x.md make bench: the generated section into another file (with the two markers).
BENCH_OUT ?= $(CURDIR)/docs/benchmarks.md
# BENCH_LCM_OUT=/tmp/lcm.md make bench-lcm: the life-cycle table into a file too.
BENCH_LCM_OUT ?=
.PHONY: bench
bench: ## Benchmarks on the all-in-one cloud (N VMs, default 50; not part of test): results into docs/benchmarks.md.
	BENCH_N=$(N) BENCH_OUT=$(BENCH_OUT) BENCH_CMD="make bench N=$(N)" $(TEST_ENV) \
		go test -tags bench -count=1 -timeout 120m -run '^TestBench$$' -v ./test/bench
	@# The life-cycle on the real charts: Helm actions per component at install and per change.
	$(MAKE) --no-print-directory bench-lcm
	@# The whole cloud deployed on the real node by the operator against Helm alone.
	$(MAKE) --no-print-directory bench-deploy
	@# The whole cloud's case again, with the comparisons make test leaves out.
	$(MAKE) --no-print-directory bench-cloud

.PHONY: bench-boot
bench-boot: ## The boot rows alone (root, about 30 min): TestWholeCloud up to the tenant, with BOOT_ROUNDS boot-benchmark rounds, then the cloud deleted.
	KUPENSTACK_BOOT_BENCH_ROUNDS=$(BOOT_ROUNDS) KUPENSTACK_WHOLE_CLOUD_TENANT_ONLY=1 $(MAKE) --no-print-directory test-real-cluster RUN='^TestWholeCloud$$'

.PHONY: bench-deploy
bench-deploy: ## The deploy row of make bench alone (root, about 30 min): the whole cloud on the real node by the operator, then by helm in dependency order (each step installed, then its pods waited for); the ratio.
	hack/install-test-tools.sh node
	KUPENSTACK_REAL_CLUSTER=1 KUPENSTACK_DEPLOY_BENCH=1 KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test -count=1 -v -timeout 90m -run '^TestDeployBench$$' ./test/realcluster/

.PHONY: test-release-upgrade
test-release-upgrade: ## The release upgrade on real pods (root, about 26 min with the images cached, not in make test): the one-node cloud deployed on 2025.1, upgraded to 2026.1 (Debian testing's images, built if missing) under the API probe; failed calls, longest outage, the tenant's server.
	hack/install-test-tools.sh node
	KUPENSTACK_REAL_CLUSTER=1 KUPENSTACK_RELEASE_UPGRADE=1 KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test -count=1 -v -timeout 90m -run '^TestReleaseUpgrade$$' ./test/realcluster/

# make bench-cloud BOOT_ROUNDS=5: how many boot-benchmark rounds.
BOOT_ROUNDS ?= 3
.PHONY: bench-cloud
bench-cloud: ## TestWholeCloud (root, about 50 min) with BOOT_ROUNDS boot-benchmark rounds (make test runs none) and glance's one-setting upgrade under the charts' own rolling update beside KupenStack's.
	KUPENSTACK_BOOT_BENCH_ROUNDS=$(BOOT_ROUNDS) KUPENSTACK_UPGRADE_COMPARE=1 $(MAKE) --no-print-directory test-real-cluster RUN='^TestWholeCloud$$'

.PHONY: bench-lcm
bench-lcm: ## The life-cycle row of make bench alone: every release's cloud installed on kwok nodes from the real charts, Helm actions counted.
	BENCH_LCM_OUT=$(BENCH_LCM_OUT) $(TEST_ENV) go test -tags bench -count=1 -timeout 40m -run '^TestBenchLCM$$' -v ./test/bench/lcm

##@ OpenStack images (root; Debian packages, no container engine; see docs/images.md)
# make images IMAGES="mariadb keystone" IMAGES_RELEASE=2026.1: some images of another set.
IMAGES ?=
IMAGES_RELEASE ?= 2025.1
export IMAGES_RELEASE
.PHONY: images
images: ## Build and smoke-test the OpenStack images (IMAGES, default all of IMAGES_RELEASE) into ~/.cache/kupenstack/images; cached.
	hack/images.sh build $(IMAGES)

.PHONY: images-import
images-import: ## Import the images into containerd (CONTAINERD_ADDRESS), building what is missing.
	hack/images.sh import $(IMAGES)

.PHONY: test-images
test-images: ## Smoke-test every image of IMAGES_RELEASE again, from the cache (all must be built).
	KUPENSTACK_IMAGES=required go test -count=1 -v -run 'TestImagesSmoke|TestReleaseFiles' ./test/images/

.PHONY: guest-image
guest-image: ## Build the test VMs' bootable disk (raw, ~19 MiB; kernel, busybox, dropbear) into ~/.cache/kupenstack/guest and print its path; cached (docs/guest-image.md).
	@hack/guest-image.sh build

.PHONY: test-guest-image
test-guest-image: ## Boot the test VMs' disk in QEMU (KVM if usable, else TCG) and check its console contract, metadata, SSH and power button.
	hack/guest-image.sh test

##@ Quickstart (root; see hack/quickstart-real.sh and hack/quickstart.sh)
.PHONY: quickstart
quickstart: ## Real: a one-node cluster with real pods, the operator deploys OpenStack 2025.1 into it, the demo tenant's VM boots; idempotent (~25 min the first time).
	hack/quickstart-real.sh up

.PHONY: quickstart-down
quickstart-down: ## Stop the real quickstart's cluster and cloud; the host as found.
	hack/quickstart-real.sh down

.PHONY: quickstart-sim
quickstart-sim: ## Simulated, for a quick look: kwok nodes + OpenStack all-in-one + the operator + the samples, all Ready; idempotent.
	hack/quickstart.sh up

# make quickstart-sim-down AIO=stop: stop the all-in-one too.
.PHONY: quickstart-sim-down
quickstart-sim-down: ## Delete the simulated quickstart's samples' OpenStack resources, stop the operator and the local cluster (AIO=stop: the all-in-one too).
	AIO=$(AIO) hack/quickstart.sh down

##@ OpenStack all-in-one (root; Debian packages; 127.0.0.1 only)
.PHONY: openstack-up
openstack-up: ## Install (first time), configure and start the all-in-one cloud; idempotent.
	hack/openstack-aio/up.sh

.PHONY: openstack-down
openstack-down: ## Stop what openstack-up started.
	hack/openstack-aio/stop.sh

##@ Local cluster (simulated nodes by kwok; 127.0.0.1 only; see hack/local-cluster.sh)
.PHONY: cluster-up
cluster-up: ## Start the local cluster (NODES=3 or NODES="name:k=v,k=v ...", NODE_LABELS=k=v); idempotent.
	hack/install-test-tools.sh envtest cluster
	TOOLS=$(ENVTEST_ASSETS) hack/local-cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop what cluster-up started and delete its state.
	TOOLS=$(ENVTEST_ASSETS) hack/local-cluster.sh down

##@ Real cluster (root; containerd + kubelet, real pods on a private bridge; see hack/real-cluster.sh)
.PHONY: real-cluster-up
real-cluster-up: ## Start a real one-node cluster (containerd, kubelet, kube-proxy, CoreDNS; pods on bridge ks0, 198.18.0.0/16); idempotent.
	hack/install-test-tools.sh node
	TOOLS=$(ENVTEST_ASSETS) hack/real-cluster.sh up

.PHONY: real-cluster-down
real-cluster-down: ## Stop what real-cluster-up started and leave the host as found (REAL_CLUSTER_PURGE=1: drop the imported images too).
	TOOLS=$(ENVTEST_ASSETS) hack/real-cluster.sh down

.PHONY: test-real-cluster
test-real-cluster: ## Test the real cluster (make test runs REAL_CLUSTER_TESTS; changes the host while it runs): pods, Services, DNS, isolation, host left as found; the operator's image and chart; the first deployment (RUN=TestFirstDeployment for one).
	hack/install-test-tools.sh node
	KUPENSTACK_REAL_CLUSTER=1 KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test -count=1 -v -timeout 90m $(if $(RUN),-run '$(RUN)') ./test/realcluster/

.PHONY: clean
clean: ## Remove bin/ (the built tools stay cached in ~/.cache/kupenstack).
	rm -rf $(BIN)

.PHONY: render
render: ## Render what the life-cycle would deploy (RENDER_FILES, RENDER_CHARTS), no cluster needed.
	go run ./cmd/kupenstack render $(foreach f,$(RENDER_FILES),-f $(f)) $(if $(RENDER_CHARTS),--charts $(RENDER_CHARTS)) $(if $(RENDER_OUT),--out $(RENDER_OUT))
