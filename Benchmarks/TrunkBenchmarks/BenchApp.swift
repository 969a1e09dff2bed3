import Foundation
import OffstageKit
import OffstageProtocol

/// The benchmark binary as an Offstage app: every delegate method is a no-op,
/// so a measured round trip is the daemon, the wire and the SDK, nothing else.
///
/// It starts no background task, so `home` suspends it at once, and it knows
/// the `benchPing` callback the round-trip and wake benchmarks send.
enum BenchApp {
    static let bundleID = "com.offstage.bench.BenchApp"
    static let pingCallback = "benchPing"
    /// Writes the handler-entry stamps (`detail.path`) and forgets them.
    static let dumpCallback = "benchDump"

    /// The daemon spawns apps with no argument and the socket in the environment.
    static var isLaunchedByDaemon: Bool {
        CommandLine.arguments.count == 1 && ProcessInfo.processInfo.environment[AppEnvironment.socket] != nil
    }

    @MainActor
    static func run() -> Never {
        Application.main(delegate: BenchAppDelegate())
    }

    /// An `Info.plist` naming this binary (by absolute path) as the executable.
    static func writeBundle(in directory: String, executable: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let plist: [String: Any] = [
            "CFBundleIdentifier": bundleID, "CFBundleExecutable": executable, "CFBundleName": "Bench App",
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        try data.write(to: URL(fileURLWithPath: directory + "/Info.plist"))
        return directory
    }
}

/// Records the monotonic time at which each `applicationWillResignActive:`
/// and `benchPing` handler starts, so the driver can split a round trip into
/// its daemon → app and app → daemon halves.
@MainActor
final class BenchAppDelegate: ApplicationDelegate {
    var handlerEntries: [UInt64] = []

    init() { handlerEntries.reserveCapacity(1 << 16) }

    func applicationWillResignActive(_ application: Application) {
        handlerEntries.append(monotonicNanos())
    }

    func application(_ application: Application, didReceiveCallback name: String, detail: JSONValue) {
        switch name {
        case BenchApp.pingCallback:
            handlerEntries.append(monotonicNanos())
        case BenchApp.dumpCallback:
            if let path = detail["path"]?.stringValue {
                let text = handlerEntries.map(String.init).joined(separator: "\n")
                try? Data(text.utf8).write(to: URL(fileURLWithPath: path))
            }
            handlerEntries.removeAll(keepingCapacity: true)
        default:
            break
        }
    }
}

extension DaemonHarness {
    /// The handler-entry stamps BenchApp recorded since the last dump (none
    /// when `path` is nil: they are only forgotten).
    func handlerEntries(of app: String, path: String?) async throws -> [UInt64] {
        let target = path ?? "/dev/null"
        try await control([
            "command": "wake", "app": .string(app), "callback": .string(BenchApp.dumpCallback),
            "detail": ["path": .string(target)],
        ])
        guard path != nil, let text = try? String(contentsOfFile: target, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { UInt64($0) }
    }
}
