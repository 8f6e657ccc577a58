# Entry points for people; the build itself is CMake's (in build/).
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build demo test install format format-check clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# A local cluster from paxos.conf on loopback: 3 acceptors, 2 proposers, a learner, a client.
demo: build
	@scripts/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j 1

install: build
	@cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	@clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf $(BUILD)
