import ArgumentParser
import Foundation
import Synchronization
import OffstageCore
import OffstageDaemon

/// Options every command that reads a fixture takes.
struct GPSFixtureOptions: ParsableArguments {
    @Option(name: .customLong("format"), help: "Input format: gpx, nmea or json (default: from the name or content).")
    var format: String?

    @Flag(help: "Stop at the first bad line instead of skipping and counting it.")
    var strict = false

    // Unconditional: a negative speed is a value refused, not an option.
    // Text, checked as a decimal: Double() would take 0x10 for 16.
    @Option(
        name: .customLong("route-speed"), parsing: .unconditional,
        help: ArgumentHelp("Speed in m/s used to time GPX routes and waypoints.", valueName: "route-speed"))
    var routeSpeedArgument = "20"

    /// `--route-speed` in m/s (once validated).
    var routeSpeed: Double { DecimalText.decimal(routeSpeedArgument) ?? .nan }

    @Option(help: "Start time of untimed GPX routes/waypoints, ISO 8601 (default 2024-01-01T00:00:00Z).")
    var start: String?

    @Option(help: "Date (YYYY-MM-DD) to assume for NMEA logs with GGA but no RMC.")
    var nmeaDate: String?

    /// Usage errors, before anything runs (exit 64, with the help to read).
    func validate() throws {
        guard DecimalText.decimal(routeSpeedArgument) != nil else {
            throw ValidationError("--route-speed takes decimal metres per second, not \(routeSpeedArgument)")
        }
        guard routeSpeed > 0, routeSpeed.isFinite else { throw ValidationError("--route-speed must be a positive, finite number (got \(routeSpeedArgument))") }
        _ = try readOptions()
        _ = try inputFormat()
    }

    func readOptions() throws -> LocationFixtureReadOptions {
        var options = LocationFixtureReadOptions(policy: strict ? .strict : .skipAndCount)
        options.routeSpeed = routeSpeed
        if let start {
            guard let t = LocationTimeFormat.parseISO8601(start) else {
                throw badTimeOption("--start", start, expected: "an ISO 8601 time like 2024-05-06T07:30:00Z")
            }
            options.routeStartTime = t
        }
        if let nmeaDate {
            guard let t = LocationTimeFormat.parseISO8601(nmeaDate + "T00:00:00Z") else {
                throw badTimeOption("--nmea-date", nmeaDate, expected: "a date like 2024-05-06")
            }
            options.assumedNMEADate = t
        }
        return options
    }

    func inputFormat() throws -> LocationFixtureFormat? {
        try format.map { try parseFormat($0, option: "--format") }
    }
}

func parseFormat(_ text: String, option: String) throws -> LocationFixtureFormat {
    switch text.lowercased() {
    case "gpx": return .gpx
    case "nmea", "nmea0183": return .nmea
    case "json", "gpsd", "tpv": return .gpsdJSON
    default: throw ValidationError("\(option) \(text): expected gpx, nmea or json")
    }
}

/// Prints a read summary's skipped lines (at most `limit`) to stderr.
func reportIssues(_ summary: LocationReadSummary, limit: Int = 10) {
    for issue in summary.issues.prefix(limit) { printError("offstage: warning: \(issue)") }
    if summary.skipped > limit {
        let more = summary.skipped - limit
        printError("offstage: warning: ... \(more) more bad \(more == 1 ? "line" : "lines") skipped")
    }
}

/// Where fixes go: a named gpsd on this machine, or a private one.
struct GPSDTargetOptions: ParsableArguments {
    @Option(name: .customLong("gpsd"), help: "A running gpsd as HOST:PORT, HOST or PORT (default: start a private gpsd for the duration).")
    var gpsd: String?

    // Optional, so that one given without --gpsd (a private gpsd has its
    // own) is refused rather than ignored.
    @Option(help: "The control socket (-F) of the gpsd --gpsd names, used to add our device (default: \(GPSDControl.defaultControlSocket)).")
    var control: String?

    // Text, checked as a decimal: Double() would take 0x10 for 16.
    @Option(
        name: .customLong("hold"), parsing: .unconditional,
        help: ArgumentHelp("Keep the device (and a private gpsd) up this many seconds after the last fix, for watchers.", valueName: "hold"))
    var holdArgument = "0"

    /// `--hold` in seconds (once validated).
    var hold: Double { DecimalText.decimal(holdArgument) ?? .nan }

    func validate() throws {
        guard DecimalText.decimal(holdArgument) != nil else { throw ValidationError("--hold takes decimal seconds, not \(holdArgument)") }
        guard hold.isFinite, (0...86400).contains(hold) else { throw ValidationError("--hold takes 0 to 86400 seconds (got \(holdArgument))") }
        if let control {
            try requireUTF8(control, "--control")
            guard gpsd != nil else {
                throw ValidationError("--control names the control socket of the gpsd --gpsd names: give --gpsd HOST:PORT too, or leave --control out")
            }
        }
        _ = try gpsd.map(parseGPSDEndpoint)
    }
}

/// A `--gpsd HOST:PORT` (or HOST, or PORT) option's value; a usage error for anything else.
func parseGPSDEndpoint(_ text: String) throws -> GPSDEndpoint {
    guard let endpoint = GPSDEndpoint(parsing: text) else {
        throw ValidationError("--gpsd \(text.isEmpty ? "\"\"" : text): expected HOST:PORT, HOST or PORT (1 to 65535)")
    }
    return endpoint
}

/// A pseudo-terminal attached to a gpsd for the duration of a command.
///
/// Until ``close()``, SIGINT, SIGTERM or SIGHUP first stops the private
/// gpsd and removes its directory (or takes the device off a named gpsd),
/// then ends the process: a killed `gps feed` leaves nothing behind.
final class GPSDFeedTarget {
    let pty: LocationPTY
    let endpoint: GPSDEndpoint
    private let privateGPSD: PrivateGPSD?
    private let controlSocket: String?
    private let cleanup: Int

    init(_ options: GPSDTargetOptions) throws {
        let pty = try LocationPTY()
        self.pty = pty
        if let text = options.gpsd {
            let endpoint = try parseGPSDEndpoint(text)
            self.endpoint = endpoint
            let control = options.control ?? GPSDControl.defaultControlSocket
            // Before the device is added: through the control socket of
            // another gpsd, it waited 15 s for this port to list it.
            if let failure = GPSDControl.connectionFailure(endpoint) {
                throw CommandError("cannot connect to gpsd at \(endpoint): \(failure)")
            }
            cleanup = try TerminationSignals.holding {
                do {
                    try GPSDControl.addDevice(pty.devicePath, controlSocket: control)
                } catch {
                    // An add that came too late is still carried out: undo it
                    // (briefly: ^C waits until this returns).
                    try? GPSDControl.removeDevice(pty.devicePath, controlSocket: control, within: .seconds(5))
                    throw CommandError("cannot add a device to the gpsd at \(endpoint) through \(control): \(error) (is gpsd running with -F \(control)?)")
                }
                return TerminationSignals.onTermination { _ in try? GPSDControl.removeDevice(pty.devicePath, controlSocket: control) }
            }
            controlSocket = control
            privateGPSD = nil
            guard GPSDControl.waitForDevice(pty.devicePath, at: endpoint) else {
                close()
                throw CommandError(
                    "gpsd at \(endpoint) did not open \(pty.devicePath) within \(GPSDControl.busyLimit.components.seconds) s: "
                        + "--control \(control) may be the control socket of another gpsd (it must be the -F of the gpsd at \(endpoint))")
            }
        } else {
            // The default port when it is free, so `offstage gps watch` finds
            // it; another when it is taken. The look first only spares a
            // doomed gpsd when a system one holds 2947: `preferring` is what
            // copes with a port taken meanwhile. (A private gpsd is started
            // once it reads our device.)
            let standard = GPSDEndpoint.default.port
            let preferred = GPSDControl.isListening(port: standard) ? nil : standard
            let (gpsd, token) = try TerminationSignals.holding {
                let gpsd = try PrivateGPSD(devices: [pty.devicePath], preferring: preferred)
                return (gpsd, TerminationSignals.onTermination { _ in gpsd.stopAndRemove() })
            }
            privateGPSD = gpsd
            cleanup = token
            endpoint = gpsd.endpoint
            controlSocket = nil
            printError(PrivateGPSD.started(on: gpsd.endpoint, reading: pty.devicePath))
        }
        // Once gpsd has activated the device (it flushes it while probing);
        // harmless on a fresh one.
        try pty.write(NMEAFixWriter.primer)
    }

    /// A counter of what gpsd reports for the device, once gpsd has
    /// answered its watch.
    func watch() async throws -> GPSDDeliveryCounter {
        let counter = GPSDDeliveryCounter(endpoint: endpoint, device: pty.devicePath)
        guard await counter.wait(timeout: GPSDControl.busyLimit, until: { $0.isConnected }) else {
            counter.cancel()
            throw CommandError("cannot watch gpsd at \(endpoint)")
        }
        return counter
    }

    func close() {
        TerminationSignals.remove(cleanup)
        if let controlSocket { try? GPSDControl.removeDevice(pty.devicePath, controlSocket: controlSocket) }
        privateGPSD?.stopAndRemove()
    }
}

/// Counts the fixes gpsd reports for one device (to show delivery).
final class GPSDDeliveryCounter: Sendable {
    private let state = Mutex<(connected: Bool, lost: Bool, count: Int)>((false, false, 0))
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(endpoint: GPSDEndpoint, device: String) {
        let stream = GPSDLocationSource(endpoint: endpoint, device: device).events()
        let t = Task { [self] in
            for await event in stream {
                switch event {
                case .connected: state.withLock { $0.connected = true }
                case .fix: state.withLock { $0.count += 1 }
                // A gpsd that restarts has forgotten the device: what follows is lost.
                case .disconnected: state.withLock { $0.lost = $0.lost || $0.connected }
                }
            }
        }
        task.withLock { $0 = t }
    }

    var isConnected: Bool { state.withLock { $0.connected } }
    var count: Int { state.withLock { $0.count } }
    /// Whether gpsd went away after the watch began.
    var lostGPSD: Bool { state.withLock { $0.lost } }

    /// Polls until `condition` holds or `timeout` passes.
    func wait(timeout: Duration, until condition: (GPSDDeliveryCounter) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition(self)
    }

    func cancel() { task.withLock { $0?.cancel() } }
}

/// The error for a time or date option that does not parse: the day that
/// does not exist (`--time 2024-02-30T…: 2024-02-30 does not exist
/// (February 2024 has 29 days)`), or else the form `expected`.
func badTimeOption(_ option: String, _ value: String, expected: String) -> ValidationError {
    ValidationError(
        LocationTimeFormat.nonexistentDay(value).map { "\(option) \(value): \($0)" }
            ?? "\(option) \(value) is not \(expected)")
}
