#!/usr/bin/env bash
# `make load`: the real policy-server on loopback with our four modules and
# Kubewarden's official annotations policy, each under the same concurrent
# load from `hey` on the same AdmissionReview; prints requests per second and
# p50/p99 latency side by side.
#
# Environment (all optional):
#   POLICY_SERVER      the policy-server binary (else PATH)
#   OFFICIAL_POLICY    the official annotations policy's module (no default)
#   OFFICIAL_SETTINGS  its settings as JSON (it requires a criterion and at least one value)
#   LOAD_PAYLOAD       the AdmissionReview sent (default tests/bench/kustomization-update.json)
#   LOAD_REQUESTS      requests per policy (default 20000, a few seconds each)
#   LOAD_CONCURRENCY   concurrent clients (default 8)
#   LOAD_TIME_LIMIT    seconds after which one policy's run is cut short (default 60)
#
# policy-server's interface (kubewarden/kubewarden-controller 3460bb71):
# `POST /validate/{policy_id}` with an AdmissionReview and `GET /readiness` on
# the readiness port (crates/policy-server/src/lib.rs, PolicyServer::new_from_config);
# policies.yml entries as in crates/policy-server/src/config.rs.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The policies are the folders with a metadata.yml, as the Makefile finds them.
POLICIES=()
for metadata in policies/*/metadata.yml; do POLICIES+=("$(basename "$(dirname "$metadata")")"); done
OFFICIAL_SETTINGS=${OFFICIAL_SETTINGS:-'{"criteria": "containsAnyOf", "values": ["event.toolkit.fluxcd.io/team"]}'}
PAYLOAD=${LOAD_PAYLOAD:-tests/bench/kustomization-update.json}
REQUESTS=${LOAD_REQUESTS:-20000}
CONCURRENCY=${LOAD_CONCURRENCY:-8}
TIME_LIMIT=${LOAD_TIME_LIMIT:-60}
WORK=target/load

# The same lookup as the harness' host_test::locate::engine: prints the path, or
# why there is none and fails.
find_policy_server() {
    if [[ -n ${POLICY_SERVER:-} ]]; then
        [[ -f $POLICY_SERVER ]] || { echo "POLICY_SERVER=$POLICY_SERVER is not a file"; return 1; }
        echo "$POLICY_SERVER"
    elif command -v policy-server >/dev/null; then
        command -v policy-server
    else
        echo "POLICY_SERVER is not set and there is no policy-server on PATH"
        return 1
    fi
}

# A loopback port nothing listens on, from $1 up.
free_port() {
    local port=$1
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        port=$((port + 1))
    done
    echo "$port"
}

if ! server=$(find_policy_server); then
    echo "load test skipped: $server"
    exit 0
fi
if [[ -z ${OFFICIAL_POLICY:-} ]]; then
    echo "load test skipped: OFFICIAL_POLICY (Kubewarden's official annotations policy module) is not set"
    exit 0
fi
[[ -f $OFFICIAL_POLICY ]] || { echo "OFFICIAL_POLICY=$OFFICIAL_POLICY is not a file" >&2; exit 1; }
for p in "${POLICIES[@]}"; do
    [[ -f dist/$p.wasm ]] || { echo "dist/$p.wasm is missing: run make build" >&2; exit 1; }
done
# The payload must be a whole AdmissionReview: policy-server's /validate takes nothing else.
grep -q '"kind": *"AdmissionReview"' "$PAYLOAD" ||
    { echo "$PAYLOAD is not an AdmissionReview" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK/downloads"
official_id=annotations-policy
{
    for p in "${POLICIES[@]}"; do
        mutating=$(sed -n 's/^mutating: *//p' "policies/$p/metadata.yml")
        printf '%s:\n  module: file://%s\n  policyMode: protect\n  allowedToMutate: %s\n  settings: {}\n' \
            "$p" "$(realpath "dist/$p.wasm")" "${mutating:-false}"
    done
    printf '%s:\n  module: file://%s\n  policyMode: protect\n  allowedToMutate: false\n  settings: %s\n' \
        "$official_id" "$(realpath "$OFFICIAL_POLICY")" "$OFFICIAL_SETTINGS"
} >"$WORK/policies.yml"

port=$(free_port 3300)
readiness=$(free_port $((port + 1)))
env -u RUST_BACKTRACE -u RUST_LIB_BACKTRACE "$server" \
    --policies "$WORK/policies.yml" --policies-download-dir "$WORK/downloads" \
    --addr 127.0.0.1 --port "$port" --readiness-probe-port "$readiness" \
    --ignore-kubernetes-connection-failure --log-level warn --log-no-color \
    --sigstore-cache-dir "$WORK/sigstore-data" \
    >"$WORK/policy-server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT

# policy-server compiles every module before it reports ready.
for _ in $(seq 600); do
    if [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$readiness/readiness") == 200 ]]; then
        break
    fi
    kill -0 "$server_pid" 2>/dev/null || { echo "policy-server exited:" >&2; tail -5 "$WORK/policy-server.log" >&2; exit 1; }
    sleep 0.2
done
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$readiness/readiness") == 200 ]] ||
    { echo "policy-server was not ready within 120 s:" >&2; tail -5 "$WORK/policy-server.log" >&2; exit 1; }

ids=("${POLICIES[@]}" "$official_id")
declare -A rps p50 p99 ok answer
for id in "${ids[@]}"; do
    url="http://127.0.0.1:$port/validate/$id"
    # One request first: the answer every loaded request gets.
    reply=$(curl -s --max-time 10 -H 'Content-Type: application/json' --data-binary "@$PAYLOAD" "$url" || true)
    case $reply in
        *'"allowed":true'*) answer[$id]=allowed ;;
        *'"allowed":false'*) answer[$id]=denied ;;
        *) answer[$id]=error ;;
    esac
    if [[ $reply == *'"patch":"'* ]]; then answer[$id]+=+patch; fi
    # A short warm-up, then the measured run.
    hey -n 200 -c "$CONCURRENCY" -m POST -T application/json -D "$PAYLOAD" "$url" >/dev/null
    echo "loading $id: $REQUESTS requests, $CONCURRENCY concurrent" >&2
    out="$WORK/$id.hey.txt"
    timeout "$TIME_LIMIT" hey -n "$REQUESTS" -c "$CONCURRENCY" -m POST -T application/json \
        -D "$PAYLOAD" "$url" >"$out" ||
        echo "cut short after $TIME_LIMIT s (LOAD_TIME_LIMIT): no report" >>"$out"
    kill -0 "$server_pid" 2>/dev/null ||
        { echo "policy-server exited during $id's run:" >&2; tail -5 "$WORK/policy-server.log" >&2; exit 1; }
    rps[$id]=$(awk '/Requests\/sec:/ {printf "%.0f", $2}' "$out")
    p50[$id]=$(awk '$1 == "50%" && $2 == "in" {printf "%.1f", $3 * 1000}' "$out")
    p99[$id]=$(awk '$1 == "99%" && $2 == "in" {printf "%.1f", $3 * 1000}' "$out")
    ok[$id]=$(awk '/\[200\]/ {print $2}' "$out")
done

printf '\n%-30s %-15s %11s %10s %10s %10s %12s\n' policy answer requests "req/s" "p50 ms" "p99 ms" "req/s ÷ off."
for id in "${ids[@]}"; do
    name=$id
    [[ $id == "$official_id" ]] && name="$id (official)"
    ratio=$(awk -v a="${rps[$id]:-0}" -v b="${rps[$official_id]:-0}" 'BEGIN {if (b > 0) printf "%.2fx", a / b; else print "-"}')
    printf '%-30s %-15s %11s %10s %10s %10s %12s\n' "$name" "${answer[$id]}" "${ok[$id]:-0}/$REQUESTS" \
        "${rps[$id]:--}" "${p50[$id]:--}" "${p99[$id]:--}" "$ratio"
done
echo
echo "policy-server $("$server" --version 2>/dev/null | head -1 | awk '{print $NF}') on 127.0.0.1, one server holding all five policies;"
echo "hey -n $REQUESTS -c $CONCURRENCY per policy on $PAYLOAD, after a 200-request warm-up; requests = HTTP 200 answers."
echo "p50/p99: hey's latency distribution (0.1 ms resolution). Full reports and the server log: $WORK/"
# A run where requests failed measured something else: say so, and fail.
for id in "${ids[@]}"; do
    if [[ ${ok[$id]:-0} != "$REQUESTS" || ${answer[$id]} == error ]]; then
        echo "$id: ${ok[$id]:-0} of $REQUESTS requests answered 200 (see $WORK/$id.hey.txt)" >&2
        failed=1
    fi
done
exit "${failed:-0}"
