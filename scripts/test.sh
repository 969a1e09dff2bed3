#!/usr/bin/env bash
# Set up, build everything (apps, CLI, benchmarks, tests), run every test.
# The integration tests spawn real app processes (and, for location, a real
# gpsd that they start themselves).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "building (debug, with tests)…" >&2
swift build --build-tests
swift test --skip-build --disable-xctest "$@"
