# chaind: two commands do all the set-up on a fresh machine:
#   make run    builds, creates ./.devnet on first use, starts a single-validator devnet
#   make test   builds and runs every test, closing with a plain "N passed, N failed" line
SHELL := /bin/bash
NODE_BIN := node_modules/.bin
DEVNET_HOME ?= .devnet
CHAIN_ID ?= chaind-devnet-1
TEST_FILES ?= dist/test/unit/*.test.js dist/test/e2e/*.test.js dist/test/conformance/*.test.js
# The files a defect of the JavaScript crypto backend would fail: they hash, sign, verify, recover
# or compute state roots through src/crypto/backend.ts (the JS backend is chaind's fallback when
# the native addon does not build, so it must pass the same tests). `make test` runs them a second
# time, after the whole suite, with CHAIND_CRYPTO=js (docs/DEVELOPING.md, "Both crypto backends");
# TEST_FILES_JS= (empty) skips that pass.
TEST_FILES_JS ?= $(addprefix dist/test/unit/,$(addsuffix .test.js,$(JS_UNIT))) \
  $(addprefix dist/test/conformance/,$(addsuffix .test.js,$(JS_CONFORMANCE))) \
  $(addprefix dist/test/e2e/,$(addsuffix .test.js,$(JS_E2E)))
# Chosen by counting each file's calls into the backend (docs/DEVELOPING.md): the backend's own
# vectors, the trie, EVM execution, headers, tracers and sender recovery, Cosmos signature checks
# and the app hash, the crypto pool and the executor thread; CosmJS, viem and ethers signing against
# a node; signed txs in-process and the EVM JSON-RPC (eth_call on the pool's threads) and a kill -9
# restart of an EVM node as processes.
JS_UNIT := crypto-backend evm-trie evm-exec evm-header evm-module evm-tx evm-calls evm-state-manager \
  evm-trace-replay evm-tracers evm-tracers-geth-vectors pool executor-thread ante auth-module \
  app-hash-golden app-txkinds sig-memo
JS_CONFORMANCE := cosmjs-stargate evm-clients
JS_E2E := signed-tx evm-rpc evm-tx

.PHONY: all build deps native proto proto-check compile run test test-unit test-e2e test-js tap-plugins bench bench-smoke clean

all: build

build: deps native compile

# npm ci when node_modules is missing or older than the lock file. npm 11 with this machine's
# omit-lockfile-registry-resolved setting leaves other platforms' optional packages of
# @napi-rs/cli's dependencies out of the lock, and npm ci then refuses it as out of sync; npm
# install with the same lock (and --no-save, so the lock stays as committed) installs the same tree.
deps: node_modules/.deps-stamp
node_modules/.deps-stamp: package.json package-lock.json
	npm ci --no-audit --no-fund || { echo "npm ci refused the lock file; installing with npm install --no-save"; npm install --no-audit --no-fund --no-save; }
	@touch $@

# The native addon is optional: native/build.sh installs its Debian build inputs, builds offline,
# and leaves the JS fallback in charge (with a warning) when it cannot.
native: native/chaind-native.linux-x64-gnu.node
native/chaind-native.linux-x64-gnu.node: $(wildcard native/src/*.rs) native/Cargo.toml native/build.rs native/.cargo/config.toml native/build.sh
	bash native/build.sh

# Regenerates src/gen (committed) only when proto/, buf*.yaml or the plugin version changed
# (content hash in src/gen/.inputs.sha256, not mtimes), so a fresh clone does not regenerate.
proto: deps
	bash scripts/gen-proto.sh --if-changed
proto-check: deps
	bash scripts/gen-proto.sh --check

compile: deps proto
	$(NODE_BIN)/tsc -p tsconfig.json

run: build
	@if [ ! -f $(DEVNET_HOME)/config/genesis.json ]; then \
	  node dist/src/cli/main.js init devnode --home $(DEVNET_HOME) --chain-id $(CHAIN_ID) --dev; \
	fi
	node dist/src/cli/main.js start --home $(DEVNET_HOME)

# The whole suite on the default backend (native where the addon built), then TEST_FILES_JS on
# CHAIND_CRYPTO=js; one closing line counts both passes.
test: build tap-plugins
	node scripts/run-tests.mjs $(TEST_FILES) --js $(TEST_FILES_JS)

# The JavaScript-backend pass alone.
test-js: build tap-plugins
	node scripts/run-tests.mjs --js $(TEST_FILES_JS)

test-unit: build tap-plugins
	node scripts/run-tests.mjs dist/test/unit/*.test.js

test-e2e: build tap-plugins
	node scripts/run-tests.mjs dist/test/e2e/*.test.js

# tap compiles its plugin set into node_modules/@tapjs/test. package.json's "tap.plugin" drops the
# TypeScript and mock plugins (the tests are compiled JavaScript and mock nothing): each test
# process then starts without loading ts-node and the mock loader, ~1.5 s of CPU a file less.
# `tap build` makes the set before the first run (a run that finds the set changed rebuilds it,
# but only for the runs after it).
tap-plugins: node_modules/.tap-plugins-stamp
node_modules/.tap-plugins-stamp: package.json node_modules/.deps-stamp
	node node_modules/tap/dist/esm/run.mjs build
	@touch $@

# Every bench (or BENCH=name[,name]), figures into bench/results/<UTC date-time>.json and
# bench/results/latest.md (scripts/bench.mjs); BENCH_SMOKE=1 for tiny sizes.
BENCH ?=
bench: build
	BENCH='$(BENCH)' node scripts/bench.mjs

# Every bench at a tiny size through the harness (test/e2e/bench-smoke-*.test.ts). `make test`
# runs the in-process group only; the node-process groups take minutes more.
bench-smoke: build tap-plugins
	CHAIND_BENCH_SMOKE=all node_modules/.bin/tap --disable-coverage --timeout=900 --jobs=1 dist/test/e2e/bench-smoke-*.test.js

clean:
	rm -rf dist native/target native/*.node .tap
