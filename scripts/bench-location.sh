#!/usr/bin/env bash
# Runs the location benchmarks in release mode (needs gpsd installed);
# --quick for a short run, --help for the options.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product LocationBenchmarks
exec .build/release/LocationBenchmarks "$@"
