#!/usr/bin/env bash
# Fuzzes a real `rave serve` against its own OpenAPI document with
# schemathesis: every operation, every check (`--checks all`), the stateful
# phase following the document's links, a fixed seed and a bounded number of
# examples (arguments given to this script go to `st run` after these, and
# override them: `--seed 7`). Any failure fails the run. scripts/test.sh installs schemathesis
# and runs this; set RAVE_SCHEMATHESIS to the `st` binary to run it alone.
set -euo pipefail
cd "$(dirname "$0")/.."

st=${RAVE_SCHEMATHESIS:-.tools/schemathesis/bin/st}
if [ ! -x "$st" ]; then
  echo "schemathesis not found at $st: run scripts/test.sh, or set RAVE_SCHEMATHESIS" >&2
  exit 1
fi

cargo build --locked --quiet -p rave-cli
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The admin token lets the admin operations be exercised, not just refused;
# without a rate limit no 429 stands in for the answer under test.
admin_token=contract-run-admin-token
# Created here, so the wait below never reads a file the server has not
# opened yet.
: >"$work/stdout"
"$target_dir/debug/rave" serve --addr 127.0.0.1:0 --data "$work/data" \
  --admin-token "$admin_token" --rate-limit-per-minute 0 \
  >"$work/stdout" 2>"$work/server.log" &
server_pid=$!
base=
for _ in $(seq 1 300); do
  base=$(sed -n 's/^rave listening on //p' "$work/stdout")
  [ -n "$base" ] && break
  sleep 0.1
done
if [ -z "$base" ]; then
  echo "rave serve did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi

# One worker: with several, hypothesis' threads race in CPython 3.11's
# ast.parse ("AST constructor recursion depth mismatch") and the run errors.
# Run from the scratch directory: schemathesis keeps its caches in the
# working directory, and a cached failure would be replayed next time.
hooks="$PWD/scripts/api-contract/hooks.py"
st=$(realpath "$st")
config="$PWD/scripts/api-contract/schemathesis.toml"
cd "$work"
SCHEMATHESIS_HOOKS="$hooks" "$st" --config-file "$config" run "$base/openapi.json" \
  --checks all \
  --phases examples,coverage,fuzzing,stateful \
  --header "Authorization: Bearer $admin_token" \
  --max-examples 100 \
  --seed 1 \
  --workers 1 \
  --no-color \
  --generation-database none \
  "$@"
