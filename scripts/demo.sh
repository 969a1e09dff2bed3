#!/usr/bin/env bash
# The main job: set up, build, and play the State Lab tour scenario (every
# State Lab session of the seeds) in virtual time, printing its timeline.
# Extra arguments go to `offstage run` (e.g. --json).
# Then the audio engine: a clip plays through PulseAudio (the desktop's
# server if one answers with module-role-cork loaded, which turns a call
# into an interruption; else a private headless one) and a phone call
# interrupts it. OFFSTAGE_DEMO_AUDIO=0 skips that part.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "building (debug)…" >&2
swift build --product offstage >&2
swift build --product StateLab >&2
offstage=.build/debug/offstage
$offstage run samples/scenarios/statelab-tour.yaml "$@"

[ "${OFFSTAGE_DEMO_AUDIO:-1}" = 0 ] && exit 0
echo
echo "Audio: a 5 s clip on PulseAudio; a call (a phone-role stream) rings at 1.5 s and interrupts it." >&2
server_pid=""
server_out=""
# The server dies of the SIGTERM (after stopping PulseAudio): its status is 143, not a failure.
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    if [ -n "$server_out" ]; then rm -f "$server_out"; fi
}
trap cleanup EXIT
# SIGINT and SIGTERM end the script through its EXIT trap (bash runs none when killed).
trap 'exit 130' INT
trap 'exit 143' TERM
# A desktop's server without module-role-cork (pipewire-pulse has none) plays the call over the music.
modules="$(pactl list short modules 2>/dev/null || true)"
if [[ $modules != *module-role-cork* ]]; then
    server_out="$(mktemp)"
    $offstage audio server >"$server_out" &
    server_pid=$!
    until grep -q '^PULSE_SERVER=' "$server_out"; do
        kill -0 "$server_pid" 2>/dev/null || { echo "demo: the private PulseAudio did not start" >&2; exit 1; }
        sleep 0.05
    done
    export "$(grep '^PULSE_SERVER=' "$server_out")"
fi
$offstage audio play samples/fixtures/audio/clip.ogg --app Radio &
player_pid=$!
sleep 1.5
$offstage audio play samples/fixtures/audio/ringtone.wav --role phone --app Phone >/dev/null
wait "$player_pid"
