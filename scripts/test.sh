#!/usr/bin/env bash
# Runs every check and test rave has. CI runs exactly this (see .ci/run).
# Installs what the tests need that cargo does not: Chromium and chromedriver
# (Debian packages) for the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# The browser tests drive Debian's Chromium through chromedriver.
ensure_chromium() {
  local chromium=${RAVE_CHROMIUM:-/usr/bin/chromium} driver=${RAVE_CHROMEDRIVER:-/usr/bin/chromedriver}
  if [ -x "$chromium" ] && [ -x "$driver" ]; then
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "installing chromium and chromium-driver (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }
  fi
  if [ ! -x "$chromium" ] || [ ! -x "$driver" ]; then
    echo "The browser tests need Chromium and chromedriver: install the Debian packages" >&2
    echo "'chromium' and 'chromium-driver' (or set RAVE_CHROMIUM and RAVE_CHROMEDRIVER)." >&2
    exit 1
  fi
}

step "formatting"
cargo fmt --all -- --check

step "lints"
cargo clippy --workspace --all-targets --locked -- -D warnings

ensure_chromium

step "tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
else
  echo "cargo-nextest not found; running cargo test (install it with: cargo install cargo-nextest --locked)"
  cargo test --workspace --locked --no-fail-fast
fi
