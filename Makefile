# The two set-up commands of the README: `make demo` and `make test`.
SWIFT ?= swift

.PHONY: deps build release dist clean-system-test image test-action demo test lint format fuzz chaos bench clean

deps:
	@bash scripts/install-deps.sh

# build-info.sh records the commit, date and Swift version that `fcmctl version` prints; it rewrites its header
# only when they change, and only one C file depends on it.
build: deps
	@bash scripts/release/build-info.sh
	$(SWIFT) build

# Release builds carry the Swift runtime and Foundation inside (--static-swift-stdlib): fcmctl starts in two
# thirds of the time, and a run of a thousand changes uses a tenth less CPU. Every release build here uses the
# flag: a release build without it would rebuild everything. libyaml, libstdc++ and libgcc go in statically
# too (Package.swift), so the binaries need only glibc and libcurl where they run.
release: deps
	@bash scripts/release/build-info.sh
	$(SWIFT) build -c release --static-swift-stdlib

# dist/fcmctl-VERSION-linux-ARCH.tar.gz (stripped binaries, completions, man pages, README, LICENSE,
# THIRD_PARTY.md), its debug symbols beside it, and SHA256SUMS; from the release build above.
dist: release
	@bash scripts/release/dist.sh

# The archive on a minimal Debian (mmdebstrap, cached): version, validate, plan → apply → plan in a chroot.
clean-system-test: dist
	@bash scripts/install-deps.sh --test
	bash scripts/release/clean-system-test.sh

# dist/fcmctl-VERSION-oci.tar, the image fcmctl:VERSION (umoci; no registry, no container engine), and its
# smoke test (the unpacked image in a chroot; podman where this machine lets it run a container).
image: dist
	@bash scripts/install-deps.sh --test
	bash scripts/release/image.sh
	bash scripts/release/test-image.sh

# action.yml's steps run as GitHub runs them, against dist/ served like a GitHub release.
test-action: dist
	@bash scripts/install-deps.sh --test
	python3 scripts/release/test-action

demo: build
	@bash scripts/demo.sh

test:
	@bash scripts/install-deps.sh --test
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift
	@bash scripts/release/build-info.sh
	$(SWIFT) build
	python3 -m pytest -q -W ignore::DeprecationWarning Tests/sdk Tests/cli
	$(SWIFT) test
	@$(MAKE) --no-print-directory dist
	bash scripts/release-smoke.sh
	python3 scripts/release/readme-walkthrough
	bash scripts/release/clean-system-test.sh
	python3 scripts/release/test-action
	bash scripts/release/image.sh
	bash scripts/release/test-image.sh
	python3 scripts/chaos/kill-apply --trials 3 --seed 1
	python3 scripts/chaos/kill-apply --store gcs --trials 3 --seed 2
	python3 scripts/chaos/kill-apply --signal mixed --trials 2 --seed 3
	python3 scripts/chaos/journal-cuts --subscriptions 1000
	FCMCTL_STATE_SHARDS=8 python3 scripts/chaos/kill-apply --trials 2 --seed 4
	FCMCTL_STATE_SHARDS=8 python3 scripts/chaos/kill-apply --store gcs --trials 2 --seed 5
	FCMCTL_STATE_SHARDS=8 python3 scripts/chaos/journal-cuts --subscriptions 1000
	python3 scripts/chaos/kill-apply --partial --trials 2 --seed 8
	python3 scripts/chaos/kill-apply --partial --store gcs --trials 2 --seed 9
	python3 scripts/fuzz --cases 500 --seed 1
	FCM_BUILD_DIR=.build/debug python3 scripts/bench/ten_million.py --smoke --no-strace

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
	FCMCTL_STATE_SHARDS=16 python3 scripts/chaos/kill-apply --trials 10
	FCMCTL_STATE_SHARDS=16 python3 scripts/chaos/kill-apply --store gcs --trials 6
	python3 scripts/chaos/kill-apply --partial --trials 10
	python3 scripts/chaos/kill-apply --partial --store gcs --trials 6

clean:
	rm -rf .build dist
