import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon

/// `offstage gps fix LAT LON`: send one fix.
struct GPSFixCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fix",
        abstract: "Send one fix to gpsd (stamped now unless --time is given).",
        discussion: "Negative coordinates need no --: offstage gps fix -33.8688 151.2093 (south and west are negative)."
    )

    // Every word that is not a known option, so that a negative latitude or
    // longitude is a coordinate, not an option.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Latitude and longitude in degrees.", valueName: "latitude longitude"))
    var coordinates: [String] = []

    // Unconditional: a negative altitude (below sea level) is a value, not an option.
    @Option(parsing: .unconditional, help: ArgumentHelp("Altitude in metres.", valueName: "metres"))
    var altitude: String?

    @Option(help: "Fix time, ISO 8601 (default: now).")
    var time: String?

    @OptionGroup var target: GPSDTargetOptions

    /// The coordinate and time given; a usage error for anything else.
    func fix() throws -> LocationFix {
        let coordinates = try operands(coordinates, negatives: "coordinates")
        guard coordinates.count == 2 else {
            throw ValidationError("gps fix takes a latitude and a longitude, got \(coordinates.isEmpty ? "none" : coordinates.joined(separator: " "))")
        }
        // Decimal, as in the fixtures: Double() takes 0x10 for 16.
        guard let latitude = DecimalText.decimal(coordinates[0]), let longitude = DecimalText.decimal(coordinates[1]) else {
            throw ValidationError("gps fix takes a latitude and a longitude in decimal degrees, not \(coordinates.joined(separator: " "))")
        }
        let altitude = try altitude.map { text in
            guard let metres = DecimalText.decimal(text) else { throw ValidationError("--altitude takes decimal metres, not \(text)") }
            return metres
        }
        let coordinate = LocationCoordinate(latitude: latitude, longitude: longitude)
        // As given: 91 was shown as 91.0.
        guard coordinate.isValid else {
            throw ValidationError("\(coordinates[0]), \(coordinates[1]) is not a valid coordinate (latitude -90 to 90, longitude -180 to 180)")
        }
        var stamp = Date().timeIntervalSince1970
        if let time {
            guard let t = LocationTimeFormat.parseISO8601(time) else {
                throw badTimeOption("--time", time, expected: "an ISO 8601 time")
            }
            stamp = t
        }
        let fix = LocationFix(latitude: latitude, longitude: longitude, time: LocationTimeFormat.toMillisecond(stamp), altitude: altitude)
        if let problem = fix.implausibility { throw ValidationError(problem) }
        // Fed to gpsd as NMEA, whose two-digit year would put it in another century.
        if let problem = LocationFeeder.problem(feeding: fix) {
            throw ValidationError("\(time.map { "--time \($0)" } ?? "the system clock's time"): \(problem)")
        }
        return fix
    }

    func validate() throws { _ = try fix() }

    func run() async throws {
        try await reportingErrors {
            var fix = try fix()
            let gpsd = try GPSDFeedTarget(target)
            defer { gpsd.close() }
            let counter = try await gpsd.watch()
            defer { counter.cancel() }
            // Stamped now, not when the command began: adding the device to
            // gpsd takes about 3 s.
            if time == nil { fix.time = LocationTimeFormat.toMillisecond(Date().timeIntervalSince1970) }
            try LocationFeeder(pty: gpsd.pty).send(fix)
            guard await counter.wait(timeout: .seconds(5), until: { $0.count >= 1 }) else {
                throw CommandError("gpsd at \(gpsd.endpoint) did not report the fix")
            }
            printError("Sent \(LocationTimeFormat.iso8601(fix.time)) \(fix.latitude), \(fix.longitude) to gpsd at \(gpsd.endpoint).")
            if target.hold > 0 { try await Task.sleep(for: .seconds(target.hold)) }
        }
    }
}
