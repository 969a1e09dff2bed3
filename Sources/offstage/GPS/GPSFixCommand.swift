import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon

/// `offstage gps fix LAT LON`: send one fix.
struct GPSFixCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fix",
        abstract: "Send one fix to gpsd (stamped now unless --time is given).",
        discussion: "Negative coordinates go after --, as in: offstage gps fix -- -33.8688 151.2093"
    )

    @Argument(help: "Latitude in degrees.")
    var latitude: Double

    @Argument(help: "Longitude in degrees.")
    var longitude: Double

    @Option(help: "Altitude in metres.")
    var altitude: Double?

    @Option(help: "Fix time, ISO 8601 (default: now).")
    var time: String?

    @OptionGroup var target: GPSDTargetOptions

    func run() async throws {
        try await reportingErrors {
            let coordinate = LocationCoordinate(latitude: latitude, longitude: longitude)
            guard coordinate.isValid else { throw CommandError("\(latitude), \(longitude) is not a valid coordinate") }
            var stamp = Date().timeIntervalSince1970
            if let time {
                guard let t = LocationTimeFormat.parseISO8601(time) else {
                    throw badTimeOption("--time", time, expected: "an ISO 8601 time")
                }
                stamp = t
            }
            let fix = LocationFix(latitude: latitude, longitude: longitude, time: (stamp * 1000).rounded() / 1000, altitude: altitude)
            if let problem = fix.implausibility { throw CommandError(problem) }
            let gpsd = try GPSDFeedTarget(target)
            defer { gpsd.close() }
            let counter = GPSDDeliveryCounter(endpoint: gpsd.endpoint, device: gpsd.pty.devicePath)
            defer { counter.cancel() }
            guard await counter.wait(timeout: .seconds(5), until: { $0.isConnected }) else {
                throw CommandError("cannot watch gpsd at \(gpsd.endpoint)")
            }
            try LocationFeeder(pty: gpsd.pty).send(fix)
            guard await counter.wait(timeout: .seconds(5), until: { $0.count >= 1 }) else {
                throw CommandError("gpsd at \(gpsd.endpoint) did not report the fix")
            }
            printError("Sent \(LocationTimeFormat.iso8601(fix.time)) \(latitude), \(longitude) to gpsd at \(gpsd.endpoint).")
            if target.hold > 0 { try await Task.sleep(for: .seconds(target.hold)) }
        }
    }
}
