import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization

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

    /// The environment for a PulseAudio command-line client of this server.
    var clientEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = server.serverAddress
        environment["PULSE_COOKIE"] = server.directory.appendingPathComponent("cookie").path
        return environment
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
