#!/usr/bin/env bash
# The main job: set up, build, and play the State Lab tour scenario (every
# State Lab session of the seeds) in virtual time, printing its timeline.
# Extra arguments go to `offstage run` (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "building (debug)…" >&2
swift build --product offstage >&2
swift build --product StateLab >&2
exec .build/debug/offstage run samples/scenarios/statelab-tour.yaml "$@"
