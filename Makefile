# The two set-up commands of the README: `make demo` and `make test`.
SWIFT ?= swift

.PHONY: deps build release demo test lint format fuzz chaos bench clean

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build

# Release builds carry the Swift runtime and Foundation inside (--static-swift-stdlib): fcmctl starts in two
# thirds of the time, and a run of a thousand changes uses a tenth less CPU. Every release build here uses the
# flag: a release build without it would rebuild everything.
release: deps
	$(SWIFT) build -c release --static-swift-stdlib

demo: build
	@bash scripts/demo.sh

test:
	@bash scripts/install-deps.sh --test
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift
	$(SWIFT) build
	python3 -m pytest -q -W ignore::DeprecationWarning Tests/sdk Tests/cli
	$(SWIFT) test
	bash scripts/release-smoke.sh
	python3 scripts/chaos/kill-apply --trials 3 --seed 1
	python3 scripts/chaos/kill-apply --store gcs --trials 3 --seed 2
	python3 scripts/chaos/kill-apply --signal mixed --trials 2 --seed 3
	python3 scripts/fuzz --cases 500 --seed 1

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

format:
	$(SWIFT) format format --in-place --recursive Sources Tests Package.swift

fuzz: build
	python3 scripts/fuzz --cases 10000 --seed 7 --timeout 10 --sizes full

chaos: build
	python3 scripts/chaos/kill-apply --trials 20
	python3 scripts/chaos/kill-apply --store gcs --trials 10
	python3 scripts/chaos/kill-apply --signal mixed --trials 10
	python3 scripts/chaos/kill-apply --signal mixed --store gcs --trials 6

clean:
	rm -rf .build
