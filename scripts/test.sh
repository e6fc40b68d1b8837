#!/usr/bin/env bash
# Runs every check and test rave has. CI runs exactly this (see .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "formatting"
cargo fmt --all -- --check

step "lints"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
else
  echo "cargo-nextest not found; running cargo test (install it with: cargo install cargo-nextest --locked)"
  cargo test --workspace --locked --no-fail-fast
fi
