import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon

/// `offstage audio play`: play a file and print what the engine sees.
struct AudioPlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a file through the engine and print its events (interruptions, route changes, the end).",
        discussion: """
            Behaves like a well-mannered iOS app: it resumes after an interruption only when the \
            interruption ends with shouldResume, stops when the headphones are unplugged (iOS pauses), \
            and plays again from where it was after the sound server restarts.

            Uses PULSE_SERVER (or the user's server); `offstage audio server` runs a private one.
            """
    )

    @Argument(help: "The audio file (WAV, FLAC, Ogg/Vorbis, MP3, …).")
    var file: String

    @Option(help: "The stream's media.role: music or phone (a call, which interrupts music).")
    var role: String = "music"

    @Option(help: "The app name the sound server shows.")
    var app: String = "offstage"

    // Text, checked as a decimal: Double() would take 0x10 for 16.
    @Option(name: .customLong("volume"), parsing: .unconditional, help: ArgumentHelp("Volume, from 0 to 1.", valueName: "volume"))
    var volumeArgument = "1"

    @Option(
        name: .customLong("start"), parsing: .unconditional,
        help: ArgumentHelp("Start this many seconds into the file.", valueName: "start"))
    var startArgument = "0"

    /// `--volume` (once validated).
    var volume: Double { DecimalText.decimal(volumeArgument) ?? .nan }
    /// `--start` in seconds (once validated).
    var start: Double { DecimalText.decimal(startArgument) ?? .nan }

    @Flag(help: "Play in a loop until interrupted with ^C.")
    var loop = false

    @Option(help: "The PulseAudio server (default: PULSE_SERVER, or the user's server).")
    var server: String?

    func validate() throws {
        try requireUTF8(file, "file")
        if server?.isEmpty == true { throw ValidationError("--server needs an address such as unix:/path/native; leave it out for the default") }
        if server == nil, ProcessInfo.processInfo.environment["PULSE_SERVER"] == "" {
            throw ValidationError("PULSE_SERVER is set but empty: give it an address such as unix:/path/native, or unset it for the user's server")
        }
        guard AudioRole(rawValue: role) != nil else { throw ValidationError("--role \(role): expected music or phone") }
        guard DecimalText.decimal(volumeArgument) != nil else { throw ValidationError("--volume takes a decimal number, not \(volumeArgument)") }
        guard (0...1).contains(volume) else { throw ValidationError("--volume must be within 0…1") }
        guard DecimalText.decimal(startArgument) != nil else { throw ValidationError("--start takes decimal seconds, not \(startArgument)") }
        // Past the file's end (however far) is checked against the file, in `run`.
        guard start.isFinite, start >= 0 else { throw ValidationError("--start takes 0 or more seconds") }
    }

    func run() async throws {
        silenceLibraryNotes()
        let info = try await reportingErrors { try AudioFile.forPlayback(path: file) }
        // A usage error too, though only the file can tell (exit 64, before any server is asked).
        guard let startTime = Duration(acceptedSeconds: start), startTime < info.duration else {
            throw ValidationError("--start \(startArgument) s is not before the end of \(file) (\(info.length))")
        }
        try await reportingErrors {
            let role = AudioRole(rawValue: role)!
            let backend = try PulseAudioBackend(options: PulseAudioOptions(server: server))
            let request = AudioPlayerRequest(path: file, role: role, appName: app, looping: loop)
            printError("Playing \(file) (\(info.summary)) as \(role.rawValue) on the \(try backend.route().rawValue).")
            let began = ContinuousClock.now
            /// A line of the event table: the time, the position, what happened.
            func row(_ position: Duration, _ text: String) {
                line("\(stamp(ContinuousClock.now - began))  \(stamp(position))  \(text)")
            }
            printError("   time       position  event")
            var player = try startPlayer(backend, request, at: startTime)
            // Where the sound is, from the position read at each event (the
            // first is `started`) and the time since, so a restart after a
            // server reset resumes where the sound stopped. Nothing polls.
            var tracker = PositionTracker(start: startTime, length: info.duration, looping: loop)
            for await event in backend.events {
                var lastPosition = tracker.position
                switch event {
                case .connected: continue
                case .disconnected(let why):
                    tracker.freeze()
                    lastPosition = tracker.position
                    row(lastPosition, "\(why); reconnecting")
                case .mediaServicesReset:
                    row(lastPosition, "media services were reset; playing again from \(formatSeconds(lastPosition.seconds)) s")
                    do {
                        // A reset already played (the server died twice quickly) has a player: one at a time.
                        try? backend.stop(player)
                        player = try startPlayer(backend, request, at: lastPosition)
                        tracker.restart(at: lastPosition)
                    } catch let error as AudioError where error.isServerGone {
                        // The server died again before the player was made
                        // (or just after, taking it along): the backend
                        // reconnects, and the next reset plays from here.
                        row(lastPosition, "the server went away again (\(error.message)); waiting for it")
                    }
                case .player(let id, let event):
                    guard id == player else { continue }
                    if let position = try? backend.position(id) {
                        tracker.update(position, playing: (try? backend.state(id)) == .playing)
                        lastPosition = position
                    }
                    // A failure's message is the command's error, printed once, below the table.
                    if case .failed = event { row(lastPosition, "failed") } else { row(lastPosition, "\(event)") }
                    switch event {
                    case .interruptionEnded(let shouldResume):
                        guard shouldResume else { line("not resuming (no shouldResume)"); return }
                        do {
                            try backend.play(id)
                            // `started` comes once per player: the sound moves on from here.
                            tracker.update(lastPosition, playing: true)
                        } catch let error as AudioError where error.isServerGone
                            || error == .refused(id, .interrupted)
                        {
                            // The server died since (its reset plays again), or
                            // another call began (its end resumes).
                            row(lastPosition, "not resumed: \(error.message)")
                        }
                    case .routeChanged(.oldDeviceUnavailable, _, _):
                        line("paused, as iOS does when the headphones are unplugged")
                        return
                    case .ended: return
                    case .failed(let message): throw CommandError(message)
                    default: break
                    }
                }
            }
        }
    }

    private func startPlayer(_ backend: PulseAudioBackend, _ request: AudioPlayerRequest, at position: Duration) throws -> AudioPlayerID {
        let id = try backend.makePlayer(request)
        if position > .zero { try backend.seek(id, to: position) }
        try backend.setVolume(id, volume)
        do {
            try backend.play(id)
        } catch let error where error == AudioError.refused(id, .interrupted) {
            // Created during a call: interrupted already; the call's end resumes it.
        }
        return id
    }

    /// Writes a line of the event table at once (unbuffered), also into a pipe.
    private func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Seconds in a column, aligned on the decimal point.
    private func stamp(_ duration: Duration) -> String {
        alignedSeconds(duration.seconds, wholeWidth: 4, unit: " s")
    }
}

/// Where a player's sound is: the position read at its last event, and
/// while it plays, the time since. A player's clock is the sound card's,
/// so the estimate drifts from the real position by the sink's drift from
/// the system clock, for as long as it plays without an event (an
/// underrun's new `started` re-reads it): nothing on a null sink, which
/// runs on the system clock, and some milliseconds a minute on a sound
/// card. The poll this replaced re-read it each second.
/// Reckoned from the clock, the position could run past the file's end
/// (or, looping, round it): it is kept within the file.
private struct PositionTracker {
    private var base: Duration
    /// When `base` was read, if the player was playing then.
    private var playingSince: ContinuousClock.Instant?
    private let length: Duration
    private let looping: Bool

    init(start: Duration, length: Duration, looping: Bool) {
        base = start
        self.length = length
        self.looping = looping
    }

    var position: Duration {
        (base + (playingSince.map { ContinuousClock.now - $0 } ?? .zero)).position(inFileOf: length, looping: looping)
    }

    mutating func update(_ position: Duration, playing: Bool) {
        base = position
        playingSince = playing ? ContinuousClock.now : nil
    }

    /// A new player starts at `position` (it plays from its `started` event).
    mutating func restart(at position: Duration) { update(position, playing: false) }

    /// The sound stopped now (the server is gone): the position stays.
    mutating func freeze() { update(position, playing: false) }
}

extension AudioError {
    /// The server went away: not connected, or the player went with it.
    fileprivate var isServerGone: Bool { code == .serverUnavailable || code == .noSuchPlayer }
}
