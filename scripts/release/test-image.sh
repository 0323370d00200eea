#!/usr/bin/env bash
# Usage: bash scripts/release/test-image.sh [DIST_DIR]        (default: dist; after scripts/release/image.sh)
# Smoke test of the container image as a user gets it, DIST_DIR/fcmctl-VERSION-oci.tar:
#  - its SHA256SUMS line matches; the image config has the entrypoint, working directory and labels;
#  - unpacked with umoci (as a runtime would: the layers applied, config.json generated from the image
#    config), its root file system runs in a chroot (private mount namespace, /dev and /proc mounted) with
#    the process the image config gives (entrypoint, PATH and environment, working directory):
#    `version`, `validate` of examples/quickstart, and plan → apply → plan against fcm-emulator started
#    from the same image (fcmctl's libcurl requests, from the image's libcurl4);
#  - podman loads it and runs `version`, where this machine lets podman start a container: when the OCI
#    runtime refuses (e.g. setrlimit in a sandbox), that part is skipped with the exact error.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist="${1:-dist}"
[ "$(id -u)" -eq 0 ] || { echo "test-image: needs root (umoci unpack, mount namespaces, chroot), as the clean-system test does" >&2; exit 1; }
shopt -s nullglob
images=("$dist"/fcmctl-*-oci.tar)
[ ${#images[@]} -eq 1 ] || { echo "test-image: need exactly one $dist/fcmctl-VERSION-oci.tar (make image); found ${#images[@]}" >&2; exit 1; }
image_tar="${images[0]}"
name=$(basename "$image_tar")
version="${name#fcmctl-}"
version="${version%-oci.tar}"
passed=0
failed=0
skipped=()
ok() { passed=$((passed + 1)); echo "ok    $1"; }
fail() { failed=$((failed + 1)); echo "FAIL  $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/      /'; }

work=$(mktemp -d -t fcmctl-test-image.XXXXXX)
emulator_pid=""
# $! of `in_image … &` is the subshell running the function; the emulator is its child (unshare execs down to
# it), and killing the subshell alone left the emulator running after every run of this script.
stop_emulator() {
  [ -n "$emulator_pid" ] || return 0
  # The emulator first, so the subshell reaps it as it returns; then the subshell itself.
  pkill -P "$emulator_pid" 2>/dev/null || true
  wait "$emulator_pid" 2>/dev/null || true
  emulator_pid=""
}
cleanup() {
  stop_emulator
  rm -rf "$work"
}
trap cleanup EXIT

if (cd "$dist" && grep -q " [ *]\?$name\$" SHA256SUMS && sha256sum -c --ignore-missing --quiet SHA256SUMS); then
  ok "$name matches its line in $dist/SHA256SUMS"
else
  fail "$name matches its line in $dist/SHA256SUMS"
fi

mkdir "$work/layout"
tar -xf "$image_tar" -C "$work/layout"
umoci unpack --image "$work/layout:fcmctl:$version" "$work/bundle" >/dev/null
rootfs="$work/bundle/rootfs"

# The image config (from the layout), and the process a runtime would start (config.json, made by umoci
# from the image config): the test runs exactly that process.
# The commit the archive's fcmctl reports (the image's own is checked against the label below).
archive_commit=$(tar -xzOf "$dist/fcmctl-$version-linux-$(uname -m).tar.gz" "fcmctl-$version-linux-$(uname -m)/bin/fcmctl" > "$work/fcmctl" \
  && chmod +x "$work/fcmctl" && "$work/fcmctl" version --format json | sed -n 's/.*"commit": "\(.*\)".*/\1/p')
if report=$(python3 - "$work/layout" "$version" "$archive_commit" <<'EOF'
import json, os, re, sys
layout, version, commit = sys.argv[1:]
def blob(digest):
    with open(os.path.join(layout, "blobs", *digest.split(":"))) as handle:
        return json.load(handle)
index = json.load(open(os.path.join(layout, "index.json")))
[entry] = index["manifests"]
assert entry["annotations"]["org.opencontainers.image.ref.name"] == f"fcmctl:{version}", entry
manifest = blob(entry["digest"])
config = blob(manifest["config"]["digest"])
assert len(manifest["layers"]) == 2, f"{len(manifest['layers'])} layers"
assert config["os"] == "linux" and config["architecture"] in ("amd64", "arm64"), config
c = config["config"]
assert c["Entrypoint"] == ["/usr/local/bin/fcmctl"], c["Entrypoint"]
assert c.get("WorkingDir") == "/work", c.get("WorkingDir")
labels = c["Labels"]
assert labels["org.opencontainers.image.version"] == version, labels
revision = labels["org.opencontainers.image.revision"]
assert re.fullmatch(r"[0-9a-f]{12,40}(-dirty)?", revision), labels
assert revision.startswith(commit.removesuffix("-dirty")) and revision.endswith("-dirty") == commit.endswith("-dirty"), (revision, commit)
assert labels["org.opencontainers.image.source"] == "https://github.com/fcmctl/fcmctl", labels
assert labels["org.opencontainers.image.licenses"], labels
print(f"{manifest['layers'][0]['size']} {manifest['layers'][1]['size']} {labels['org.opencontainers.image.licenses']}")
EOF
); then
  read -r base_size app_size licenses <<<"$report"
  ok "image config: fcmctl:$version, entrypoint /usr/local/bin/fcmctl, WorkingDir /work, labels (licenses $licenses); layers $((base_size / 1000000)) MB + $((app_size / 1000000)) MB compressed"
else
  fail "image config: tag, entrypoint, working directory, labels" "$report"
fi

# The process from config.json: args (the entrypoint; the image has no Cmd), env and cwd.
mapfile -t process < <(python3 - "$work/bundle/config.json" <<'EOF'
import json, sys
process = json.load(open(sys.argv[1]))["process"]
print(process["cwd"])
print(len(process["env"]))
print("\n".join(process["env"]))
print("\n".join(process["args"]))
EOF
)
cwd="${process[0]}"
env_count="${process[1]}"
image_env=("${process[@]:2:$env_count}")
entrypoint=("${process[@]:$((2 + env_count))}")

# In the image: a private mount namespace (its mounts vanish with it), /dev and /proc as a runtime gives,
# (a runtime makes those mount points; the root file system has no /dev), chroot, then env -i with the working directory and the image's environment (and NAME=VALUE arguments
# given before the command), as the runtime starts the process. One process throughout (exec), so its id
# is the program's. Usage: in_image [NAME=VALUE…] COMMAND [ARG…]
in_image() {
  # shellcheck disable=SC2016 # the inner script's variables are its own
  unshare --mount --propagation private -- bash -c '
    root=$1; cwd=$2; shift 2
    mkdir -p "$root/dev" "$root/proc" && mount --rbind /dev "$root/dev" && mount -t proc proc "$root/proc" && exec chroot "$root" /usr/bin/env -i -C "$cwd" "$@"' \
    bash "$rootfs" "$cwd" "${image_env[@]}" "$@"
}
run_entrypoint() { in_image "${entrypoint[@]}" "$@"; }

if out=$(run_entrypoint version 2>&1) && [[ "$out" =~ ^fcmctl\ ${version//./\\.}(\ \(.*\))?$ ]]; then
  ok "entrypoint ${entrypoint[*]} (cwd $cwd) version: $out"
else
  fail "entrypoint ${entrypoint[*]} version prints fcmctl $version" "$out"
fi

cp -r examples/quickstart "$rootfs$cwd/quickstart"
if out=$(run_entrypoint validate -f quickstart 2>&1); then
  ok "entrypoint validate -f quickstart (copied into $cwd)"
else
  fail "entrypoint validate -f quickstart" "$out"
fi

# fcm-emulator from the image on a free port: its first line names the address (polled, with a deadline).
: > "$work/emulator.out"
in_image fcm-emulator --port 0 --auto-register > "$work/emulator.out" 2> "$work/emulator.err" &
emulator_pid=$!
address=""
deadline=$((SECONDS + 20))
while [ -z "$address" ] && [ "$SECONDS" -lt "$deadline" ] && kill -0 "$emulator_pid" 2>/dev/null; do
  address=$(sed -n '1s|^fcm-emulator listening on http://||p' "$work/emulator.out")
  [ -n "$address" ] || sleep 0.05
done
if [ -z "$address" ]; then
  fail "fcm-emulator from the image starts" "$(cat "$work/emulator.out" "$work/emulator.err")"
else
  codes=""
  log=""
  for step in plan apply plan; do
    flags=(--detailed-exitcode)
    [ "$step" = apply ] && flags=(--auto-approve)
    set +e
    out=$(in_image "FCM_EMULATOR_HOST=$address" "${entrypoint[@]}" "$step" -f quickstart "${flags[@]}" 2>&1 </dev/null)
    code=$?
    set -e
    codes="$codes $code"
    log+="\$ fcmctl $step (exit $code)"$'\n'"$out"$'\n'
  done
  if [ "$codes" = " 2 0 0" ]; then
    ok "plan → apply → plan against fcm-emulator at $address, both from the image: exits 2, 0, 0"
  else
    fail "plan → apply → plan against fcm-emulator from the image: exits$codes, expected 2 0 0" "$log"
  fi
fi
stop_emulator

if [ -s "$rootfs/etc/ssl/certs/ca-certificates.crt" ]; then
  ok "the image has the CA bundle (/etc/ssl/certs/ca-certificates.crt) for FCM and Google OAuth over TLS"
else
  fail "the image has /etc/ssl/certs/ca-certificates.crt"
fi

copyrights=$(find "$rootfs/usr/share/doc" -name copyright | wc -l)
packages=$(find "$rootfs/usr/share/doc" -mindepth 1 -maxdepth 1 -type d | wc -l)
if [ -s "$rootfs/usr/share/doc/libcurl4/copyright" ] && [ "$copyrights" -eq "$packages" ] \
  && [ -z "$(find "$rootfs/usr/share/man" "$rootfs/usr/share/locale" -type f ! -name locale.alias 2>/dev/null)" ]; then
  ok "slim base: no manual pages or translations; the $copyrights packages' copyright files kept"
else
  fail "slim base: no manual pages or translations, every package's copyright kept ($copyrights of $packages)"
fi
if [ -s "$rootfs/usr/local/share/doc/fcmctl/LICENSE" ]; then
  ok "fcmctl's LICENSE is in /usr/local/share/doc/fcmctl"
else
  fail "fcmctl's LICENSE is in /usr/local/share/doc/fcmctl"
fi

# podman, where it can run a container here.
if ! command -v podman >/dev/null; then
  skipped+=("podman: not installed")
elif ! loaded=$(podman load -q -i "$image_tar" 2>&1); then
  fail "podman load -i $name" "$loaded"
else
  if out=$(podman run --rm "localhost/fcmctl:$version" version 2>&1); then
    if [[ "$out" =~ ^fcmctl\ ${version//./\\.}(\ \(.*\))?$ ]]; then
      ok "podman run fcmctl:$version version: $out"
    else
      fail "podman run fcmctl:$version version" "$out"
    fi
  elif [[ "$out" == *"setrlimit"* || "$out" == *"OCI permission denied"* ]]; then
    skipped+=("podman run: this machine's sandbox refuses the OCI runtime: $out")
  else
    fail "podman run fcmctl:$version version" "$out"
  fi
  podman rmi -f "localhost/fcmctl:$version" >/dev/null 2>&1 || true
fi

for reason in "${skipped[@]}"; do echo "skip  $reason"; done
echo "image: $passed passed, $failed failed${skipped:+, ${#skipped[@]} skipped}"
[ "$failed" -eq 0 ]
