import Foundation
import OffstageProtocol
import OffstageCore
import OffstageDaemon
import Synchronization
import Testing

/// A private PulseAudio server and a backend connected to it.
struct PulseRig {
    let server: PrivatePulseAudio
    let backend: PulseAudioBackend
    let recorder: AudioEventRecorder

    init(headphones: Bool = false, options: (inout PulseAudioOptions) -> Void = { _ in }) throws {
        server = try PrivatePulseAudio(headphones: headphones, exitWhenIdle: .seconds(30))
        let recorder = AudioEventRecorder()
        var o = PulseAudioOptions(server: server.serverAddress)
        o.reconnectInterval = .milliseconds(250)
        // Stamped where they happen: a busy test pool would delay a reader.
        o.eventProbe = { event, time in recorder.record(event, at: time) }
        options(&o)
        backend = try PulseAudioBackend(options: o)
        self.recorder = recorder
    }

    /// Makes a `music` player for a fixture and plays it; returns once the
    /// server has started it.
    func playing(_ fixture: String, appName: String = "Radio") async throws -> AudioPlayerID {
        let id = try backend.makePlayer(AudioPlayerRequest(path: audioFixture(fixture), appName: appName))
        try backend.play(id)
        try #require(await recorder.next(.player(id, .started)) != nil, "\(fixture) never started")
        return id
    }

    /// The first sink's configured latency (µs) as `pactl` tells it, and
    /// what `pactl` said.
    func configuredSinkLatency() throws -> (Double?, String) {
        let sinks = try pactl("--format=json", "list", "sinks")
        return (try JSONValue(parsing: sinks).arrayValue?.first?["latency"]?["configured"]?.doubleValue, sinks)
    }

    /// The environment for a PulseAudio command-line client of this server.
    var clientEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = server.serverAddress
        environment["PULSE_COOKIE"] = server.directory.appendingPathComponent("cookie").path
        return environment
    }

    /// Runs `pactl` on this server (a separate client); its output. Throws
    /// on a non-zero exit, and kills it past 30 s: a test may run it with
    /// the client's loop held, which no time limit could release.
    @discardableResult
    func pactl(_ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pactl")
        process.arguments = arguments
        process.environment = clientEnvironment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = drain([out.fileHandleForReading, err.fileHandleForReading], of: process, within: .seconds(30))
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw AudioTestError("pactl \(arguments) exited with \(process.terminationStatus): \(String(decoding: output[1], as: UTF8.self))")
        }
        return String(decoding: output[0], as: UTF8.self)
    }

    /// Starts `paplay` on this server (a separate client, as another app would be).
    func paplay(_ path: String, role: AudioRole) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/paplay")
        process.arguments = ["--property=media.role=\(role.rawValue)", path]
        process.environment = clientEnvironment
        try process.run()
        return process
    }
}

/// A second client of a rig's server that places calls with a `phone`
/// player, as another app would. Its calls start and end synchronously,
/// so a test can place one while the rig's own loop is held.
final class PulseCaller: Sendable {
    let backend: PulseAudioBackend
    private let started = StartedPlayers()

    init(server: String) throws {
        var options = PulseAudioOptions(server: server)
        options.clientName = "Caller"
        let started = started
        options.eventProbe = { event, _ in
            if case .player(let id, .started) = event { started.add(id) }
        }
        backend = try PulseAudioBackend(options: options)
    }

    /// Starts a ringing call; returns once the server plays it. Blocks
    /// rather than awaits: the test may be holding another client's loop.
    func ring() throws -> AudioPlayerID {
        let id = try backend.makePlayer(
            AudioPlayerRequest(path: audioFixture("ringtone.wav"), role: .phone, appName: "Phone", looping: true))
        try backend.play(id)
        guard started.wait(for: id, until: .now() + 10) else { throw AudioTestError("the call never started") }
        return id
    }

    /// Ends the call; returns once the server has dropped its stream (a
    /// query after the stop is answered only after the stop is handled).
    func hangUp(_ id: AudioPlayerID) throws {
        try backend.stop(id)
        _ = try backend.route()
    }
}

/// Players that have started, for a thread to wait on.
private final class StartedPlayers: Sendable {
    private let ids = Mutex<Set<AudioPlayerID>>([])
    private let signal = DispatchSemaphore(value: 0)

    func add(_ id: AudioPlayerID) {
        ids.withLock { _ = $0.insert(id) }
        signal.signal()
    }

    /// Blocks until `id` has started; false at the deadline.
    func wait(for id: AudioPlayerID, until deadline: DispatchTime) -> Bool {
        while !ids.withLock({ $0.contains(id) }) {
            guard signal.wait(timeout: deadline) == .success else { return false }
        }
        return true
    }
}

struct AudioTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
