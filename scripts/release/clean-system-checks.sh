#!/bin/bash
# Runs inside the clean system's chroot (scripts/release/clean-system-test.sh copies it in): the release
# archive's binaries on PATH, the examples in ./examples, VERSION and the outer checks' counts in the
# environment. Prints one line per check and the closing count; exits 1 if any check failed.
set -u
passed=${HOST_PASSED:-0}
failed=${HOST_FAILED:-0}
pass() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "FAIL - $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /'; }

# check NAME EXPECTED_EXIT COMMAND…: the command's exit code must be EXPECTED_EXIT.
check() {
  local name=$1 expected=$2 output code
  shift 2
  output=$("$@" 2>&1)
  code=$?
  if [ "$code" -eq "$expected" ]; then pass "$name"; else fail "$name: exit $code, expected $expected" "$output"; fi
}

# check_output NAME REGEX COMMAND…: the command must exit 0 and print a line matching REGEX (extended).
check_output() {
  local name=$1 pattern=$2 output code
  shift 2
  output=$("$@" 2>&1)
  code=$?
  if [ "$code" -eq 0 ] && grep -Eq "$pattern" <<<"$output"; then pass "$name"; else fail "$name: exit $code, expected a line matching $pattern" "$output"; fi
}

for binary in fcmctl fcm-emulator; do
  path=$(command -v "$binary") || { fail "$binary is on PATH"; continue; }
  output=$(ldd "$path" 2>&1)
  if grep -q "not found" <<<"$output"; then fail "ldd $binary: every library is found" "$output"; else pass "ldd $binary: every library is found"; fi
done

v=${VERSION//./\\.}
check_output "fcmctl version" "^fcmctl $v \(commit [0-9a-f]{12}(-dirty)?, built [0-9]{4}-[0-9]{2}-[0-9]{2}, Swift [0-9.]+, libcurl [0-9.]+\)$" fcmctl version
check_output "fcmctl --version" "^fcmctl $v \(commit " fcmctl --version
check_output "fcmctl version --format json" "\"version\": \"$v\"" fcmctl version --format json
check_output "fcm-emulator --version" "^fcm-emulator $v \(commit [0-9a-f]{12}(-dirty)?, built " fcm-emulator --version
check "fcmctl --help" 0 fcmctl --help

for directory in examples/*/; do
  directory=${directory%/}
  compgen -G "$directory/*.yaml" >/dev/null || continue  # examples/github-actions holds workflows, not manifests
  check "fcmctl validate -f $directory" 0 fcmctl validate -f "$directory"
done

# The archive's own emulator on a free loopback port: its first line says where, so nothing sleeps.
exec 3< <(exec fcm-emulator --host 127.0.0.1 --port 0 --auto-register 2>/tmp/fcm-emulator.log)
emulator=$!
trap 'kill "$emulator" 2>/dev/null; wait "$emulator" 2>/dev/null' EXIT
if read -r -t 60 line <&3 && [[ $line == "fcm-emulator listening on http://"* ]]; then
  pass "fcm-emulator starts: $line"
  export FCM_EMULATOR_HOST=${line#fcm-emulator listening on http://}
  state=/tmp/quickstart-state.json
  rm -f "$state"
  check "quickstart: first plan exits 2 (changes)" 2 fcmctl plan -f examples/quickstart --state "$state" --detailed-exitcode
  check "quickstart: apply exits 0" 0 fcmctl apply -f examples/quickstart --state "$state" --auto-approve
  check "quickstart: second plan exits 0 (no changes)" 0 fcmctl plan -f examples/quickstart --state "$state" --detailed-exitcode
else
  fail "fcm-emulator starts" "$(cat /tmp/fcm-emulator.log)"
fi

echo "clean system: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
