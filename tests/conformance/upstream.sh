#!/usr/bin/env bash
# Runs cni-conformance against another implementation's plugins (by default
# upstream's Go plugins as Debian installs them, /usr/lib/cni) with the same
# configurations as the conformance tier (CMakeLists.txt here; keep the two
# lists alike), and prints a Markdown table of what failed. Root needed.
#   tests/conformance/upstream.sh [plugin-dir] [build-dir]
set -uo pipefail
dir=${1:-/usr/lib/cni}
build=${2:-build}
here=$(dirname "$(realpath "$0")")
runner=$build/bin/cni-conformance
out=$(mktemp -d /tmp/cni-conformance-upstream.XXXXXX)
trap 'rm -rf "$out"' EXIT

run() {  # plugin config [options...]
  local plugin=$1 config=$2
  shift 2
  [[ -x $dir/$plugin ]] || { echo "{\"plugin\":\"$plugin\",\"missing\":true}" >"$out/$plugin.json"; return; }
  "$runner" --json --cni-path "$dir" "$@" "$dir/$plugin" "$here/$config" >"$out/$plugin.json" 2>"$out/$plugin.err"
}
run bridge bridge.json
run ptp ptp.json
run macvlan macvlan.json --master cnf-master0
run tap tap.json
run host-device host-device.json --master cnf-dev0
run loopback loopback.json
run host-local host-local.json --data-dir /var/lib/cni/conformance-host-local
run static static.json
run tuning tuning.conflist
run sbr sbr.conflist
run bandwidth bandwidth.conflist
run firewall firewall.conflist
run portmap portmap.conflist --cap-args '{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]}'

python3 - "$out" <<'PY'
import json, os, re, sys
out = sys.argv[1]
print("| plugin | pass | fail | skip | what failed |")
print("| --- | ---: | ---: | ---: | --- |")
for name in ["bridge", "ptp", "macvlan", "tap", "host-device", "loopback", "host-local", "static",
             "tuning", "sbr", "bandwidth", "firewall", "portmap"]:
    path = os.path.join(out, name + ".json")
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        err = open(os.path.join(out, name + ".err")).read().strip() if os.path.exists(os.path.join(out, name + ".err")) else ""
        print(f"| {name} | | | | did not run: {err[:120]} |")
        continue
    if doc.get("missing"):
        print(f"| {name} | | | | not installed |")
        continue
    s = doc["summary"]
    # Group failures by check name without the version ("ADD 0.4.0: ..." -> "ADD <v>: ...").
    groups = {}
    for c in doc["checks"]:
        if c["result"] != "fail":
            continue
        key = re.sub(r"\b\d+\.\d+\.\d+\b", "<v>", c["name"])
        versions = re.findall(r"\b\d+\.\d+\.\d+\b", c["name"])
        g = groups.setdefault(key, {"versions": [], "detail": c["detail"]})
        g["versions"] += versions
    parts = []
    for key, g in groups.items():
        detail = re.sub(r"\s*\(stderr:.*", "", g["detail"], flags=re.S)  # logs, timestamps
        detail = re.sub(r"\s+", " ", detail)[:140].replace("|", "\\|")
        vs = " (" + " ".join(g["versions"]) + ")" if g["versions"] else ""
        parts.append(f"**{key}**{vs}: {detail}")
    print(f"| {name} | {s['pass']} | {s['fail']} | {s['skip']} | {'<br>'.join(parts) or '—'} |")
PY
