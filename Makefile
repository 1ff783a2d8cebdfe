# kubedra — all set-up happens here; a fresh machine needs only python3 (>=3.11), make and go.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: install demo prefetch test test-unit test-integration lint typecheck fuzz bench clean testbed browser image ci-fresh

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/kubedra demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/vulture src/kubedra tests benchmarks scripts vulture_whitelist.py --min-confidence 60 --exclude tests/corpus \
	  --ignore-decorators '@check,@click.*,@*.command'

typecheck: $(STAMP)
	$(BIN)/mypy

# pytest exit 5 (no tests collected) is a failure, like every other non-zero code.
test-unit: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -m "not integration" tests

# Like test-unit, exit 5 (nothing collected) fails: an empty integration run must not pass silently.
# Only the folders that hold integration tests are collected (collecting the unit suite as well costs about
# 13 CPU-seconds); tests/unit/test_integration_folders.py fails when a marked test lives anywhere else.
INTEGRATION_TESTS := tests/integration tests/differential
test-integration: $(STAMP) testbed
	$(BIN)/python -m pytest -q -m integration $(INTEGRATION_TESTS)

# The testbed comes before any suite: unit tests use its helm, and a new machine has nothing cached. The testbed's
# Go modules start downloading first (testbed/prefetch.sh, in the background), so that on a new machine the
# network overlaps pip, lint and types instead of the first Kubernetes compile
# (PREFETCHED, set for test and so for its prerequisites, tells the testbed target not to start a second one).
test: prefetch lint typecheck browser testbed test-unit test-integration
test: PREFETCHED := 1

prefetch:
	@testbed/prefetch.sh $(TESTBED_VERSIONS) </dev/null >/dev/null 2>&1 &

# Headless Chromium for the HTML report tests (Debian package); the tests skip without it except under CI.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; \
	    else echo "chromium not installed (apt-get install chromium): the browser tests will skip"; fi; }

# The container image (Dockerfile) as kubedra:<version>, with docker or podman; IMAGE=... to name it.
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
IMAGE   ?= kubedra:$(VERSION)
image:
	@tool=$$(command -v docker || command -v podman); \
	if [ -z "$$tool" ]; then echo "make image: no docker or podman on PATH: cannot build $(IMAGE) (tests/unit/deploy/test_dockerfile.py lints the Dockerfile)" >&2; exit 1; fi; \
	if ! $$tool info >/dev/null 2>&1; then echo "make image: $$tool cannot reach its daemon/runtime: cannot build $(IMAGE)" >&2; exit 1; fi; \
	DOCKER_BUILDKIT=1 $$tool build -t $(IMAGE) .

# Every release the testbed supports (data/versions.yaml testbed), each into its own cache folder. 1.38 last: its
# build uses Go go1.27.3 (testbed/Makefile GOTOOLCHAIN_1.38), which the prefetch fetches from the module proxy,
# with 1.38's modules, while the others compile.
TESTBED_VERSIONS ?= 1.37 1.36 1.35 1.34 1.38
# helm and the peers do not depend on the release: built once, into the default release's folder. The modules of
# all builds download in the background meanwhile (testbed/prefetch.sh): on a new machine much of a build's time is
# waiting on the network (make test starts them earlier). Then the Go tests of each release's launcher and oracle, each linked as its build links it.
testbed:
	@if [ "$(PREFETCHED)" != 1 ]; then testbed/prefetch.sh $(TESTBED_VERSIONS) & fi; \
	for v in $(TESTBED_VERSIONS); do $(MAKE) -C testbed K8S_VERSION=$$v k8s local || exit 1; done; \
	$(MAKE) -C testbed tools peers || exit 1; \
	for v in $(TESTBED_VERSIONS); do $(MAKE) -C testbed K8S_VERSION=$$v test || exit 1; done; wait

# CI as a new machine runs it: .ci/run in a fresh clone of HEAD (with ../shared beside it when this checkout has
# one), an empty KUBEDRA_CACHE and, with COLD_GO=1, empty Go module and build caches too. Prints the wall time.
# Run it before submitting a change to the Makefile, CI, the testbed or test infrastructure (docs/development.md).
ci-fresh:
	@set -e; root=$$(mktemp -d); trap 'chmod -R u+w "$$root" 2>/dev/null; rm -rf "$$root"' EXIT; \
	git clone -q "$(CURDIR)" "$$root/kubedra"; git -C "$$root/kubedra" checkout -q --detach "$$(git rev-parse HEAD)"; \
	if [ -d "$(CURDIR)/../shared" ]; then ln -s "$$(cd "$(CURDIR)/../shared" && pwd)" "$$root/shared"; fi; \
	mkdir "$$root/cache"; export KUBEDRA_CACHE="$$root/cache" PIP_NO_CACHE_DIR=1; \
	if [ "$(COLD_GO)" = 1 ]; then export GOMODCACHE="$$root/gomod" GOCACHE="$$root/gobuild"; fi; \
	start=$$(date +%s); rc=0; (cd "$$root/kubedra" && env -u VIRTUAL_ENV bash .ci/run) || rc=$$?; \
	echo "ci-fresh: .ci/run exited $$rc after $$(( ($$(date +%s) - start) / 60 )) min (cold cache$(if $(filter 1,$(COLD_GO)), and cold Go caches,))"; \
	exit $$rc

fuzz: $(STAMP) testbed
	KUBEDRA_FUZZ_EXAMPLES=100000 $(BIN)/python -m pytest -q -m integration tests/differential

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b; done
	$(BIN)/python benchmarks/realistic.py --preempt --verbs simulate

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache
