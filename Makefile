# SPDX-License-Identifier: BSD-3-Clause
# Entry points for people; the build itself is CMake's (in build/).
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build docs demo test sanitize fuzz packages bench install format format-check clean

all: build

# The Debian packages: `make deps` installs what is missing; the other targets do it only the
# first time on a machine (or when the list changes), then remember it in a stamp.
DEPS_STAMP = .deps-installed
deps:
	@scripts/install-deps.sh
	@touch $(DEPS_STAMP)

$(DEPS_STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@touch $@

build: $(DEPS_STAMP)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The API reference of include/paxos/*.h (Doxygen): build/docs/html/index.html and section 3
# manual pages in build/docs/man. Any Doxygen warning fails it.
docs: $(DEPS_STAMP)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) --target docs

# A local cluster from paxos.conf on loopback: 3 acceptors, 2 proposers, a learner, a client.
demo: build
	@scripts/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j 1

# Sanitizer runs without address randomisation when the system allows it: the ASan runtimes of
# clang 14 and gcc 12 can crash at start on kernels with vm.mmap_rnd_bits above 28.
NO_ASLR = $(shell setarch $$(uname -m) -R true 2>/dev/null && echo setarch $$(uname -m) -R)

# Unit tests (and fuzz corpus replays) under AddressSanitizer + UBSan, in build-asan/.
sanitize: $(DEPS_STAMP)
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPAXOS_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && $(NO_ASLR) ctest --output-on-failure -j $(JOBS) -R '^(test_|fuzz_replay_)'

# libFuzzer targets (clang) in build-fuzz/, each run FUZZ_SECONDS on a copy of its corpus.
FUZZ_SECONDS ?= 30
fuzz: $(DEPS_STAMP)
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DPAXOS_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_decode fuzz_config
	@$(NO_ASLR) tests/fuzz/run.sh build-fuzz . $(FUZZ_SECONDS)

# The Debian packages (libpaxos1, libpaxos-dev, paxos-tools), built from a scratch copy of the
# tree, checked with lintian, installed, tried and purged again: tests/checks/package_check.sh (root or
# sudo). DEBS=DIR keeps the .debs there.
packages: $(DEPS_STAMP)
	@tests/checks/package_check.sh $(if $(DEBS),--keep $(DEBS))

# Every benchmark of docs/BENCHMARKS.md (bench/run-all: about 10 minutes on 2 cores), after
# installing gnuplot for its plots; results in $(BUILD)/bench-results/<date>/.
bench: build
	@scripts/install-deps.sh --bench
	@bench/run-all $(BUILD)

install: build
	@cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

format-check: $(DEPS_STAMP)
	@clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf $(BUILD)
