#!/usr/bin/env bash
# BENCH.md B8: samples the aggregator's lag (age of the oldest change not yet
# applied to the statistics) every 100 ms while a load runs, then prints the
# p50 and p99 of the samples. Usage: lag.sh BASE_URL ADMIN_TOKEN SECONDS
set -euo pipefail
base=$1 token=$2 seconds=$3
samples=$(mktemp)
end=$((SECONDS + seconds))
while [ $SECONDS -lt $end ]; do
  curl -sf -H "Authorization: Bearer $token" "$base/v1/admin/aggregator" \
    | sed -n 's/.*"lag_ms":\([0-9]*\).*/\1/p' >> "$samples" || true
  echo >> "$samples"
  sleep 0.1
done
python3 - "$samples" <<'PY'
import sys
values = sorted(int(line) for line in open(sys.argv[1]) if line.strip())
if not values:
    sys.exit("no samples")
pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
print(f"samples {len(values)}, lag p50 {pick(0.5)} ms, p99 {pick(0.99)} ms, max {values[-1]} ms")
PY
rm -f "$samples"
