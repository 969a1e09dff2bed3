#!/usr/bin/env bash
# Set up, build everything (apps, CLI, benchmarks, tests), run every test.
# The integration tests spawn real app processes (and, for location, a real
# gpsd that they start themselves).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "building (debug, with tests)…" >&2
swift build --build-tests
# A whole run takes a few minutes; a test that hangs (waiting for an event
# that never comes) would otherwise hold CI until its own limit, with no
# word of which test it was. SIGINT, which swift test passes on to the test
# process (a SIGTERM stopped swift test and left the test process running);
# in the foreground, so that Ctrl-C still reaches it from a terminal.
limit="${OFFSTAGE_TEST_LIMIT:-20m}"
status=0
timeout --foreground --signal=INT --kill-after=30s "$limit" swift test --skip-build --disable-xctest "$@" || status=$?
if [ "$status" -eq 124 ]; then
    echo "scripts/test.sh: the tests did not finish within $limit and were stopped: a test hangs (one whose 'started' line above has no 'passed' or 'failed' line); OFFSTAGE_TEST_LIMIT sets the limit" >&2
elif [ "$status" -eq 137 ]; then
    echo "scripts/test.sh: swift test was killed (it did not stop within 30 s of the $limit limit, or something else killed it); a test process may still run" >&2
fi
exit "$status"
