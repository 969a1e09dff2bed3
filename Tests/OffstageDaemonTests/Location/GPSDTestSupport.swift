import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization

/// Everything a source reported, for tests to poll.
final class SourceRecorder: Sendable {
    private let events = Mutex<[LocationSourceEvent]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts consuming a source.
    init(_ source: some LocationSource) {
        let stream = source.events()
        let t = Task { [self] in
            for await event in stream { append(event) }
        }
        task.withLock { $0 = t }
    }

    /// Stops consuming (which stops the source's thread).
    func cancel() { task.withLock { $0?.cancel() } }

    private func append(_ event: LocationSourceEvent) { events.withLock { $0.append(event) } }

    var all: [LocationSourceEvent] { events.withLock { $0 } }
    var fixes: [LocationFix] {
        all.compactMap { if case .fix(let f) = $0 { f.fix } else { nil } }
    }
    var connectedCount: Int { all.filter { if case .connected = $0 { true } else { false } }.count }
    var disconnectedCount: Int { all.filter { if case .disconnected = $0 { true } else { false } }.count }
}

/// Polls `condition` until it holds or `timeout` passes (no fixed sleeps:
/// returns as soon as the condition is true).
func eventually(timeout: Duration = .seconds(15), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A pty and a private gpsd reading it, ready to be fed.
struct GPSDRig {
    let pty: LocationPTY
    let gpsd: PrivateGPSD
    var endpoint: GPSDEndpoint { gpsd.endpoint }

    init() throws {
        pty = try LocationPTY()
        gpsd = try PrivateGPSD(devices: [pty.devicePath])
        guard GPSDControl.waitForDevice(pty.devicePath, port: gpsd.port) else {
            throw LocationSystemError("gpsd did not activate \(pty.devicePath)")
        }
    }

    /// A source for this rig's device, with quick reconnection.
    func source() -> GPSDLocationSource {
        GPSDLocationSource(
            endpoint: endpoint,
            reconnect: LocationReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
            device: pty.devicePath)
    }
}
