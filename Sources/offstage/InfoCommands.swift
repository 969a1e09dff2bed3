import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon
import OffstageProtocol

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "The device and every app's state.")
    @Flag(help: "One JSON object.") var json = false
    @OptionGroup var client: ClientOptions

    func run() throws {
        let status = try client.send(["command": "status"])
        if json { return printJSON(status) }
        let clock = status["clock"]
        print("clock: \(clock?["mode"]?.stringValue ?? "?") \(formatSeconds(clock?["time"]?.doubleValue ?? 0)) s, profile \(status["profile"]?.stringValue ?? "?")")
        print(foregroundLine(status))
        if let waiting = status["waitingFor"], let app = waiting["app"]?.stringValue {
            // Why commands wait or queue: only `events` told.
            print("waiting for: \(app)" + (waiting["callback"]?.stringValue.map { " to answer \($0)" } ?? " to say hello"))
        }
        for app in status["apps"]?.arrayValue ?? [] {
            var line = "  \(app["bundleID"]?.stringValue ?? "?")  \(app["state"]?.stringValue ?? "?")"
            if app["launching"]?.boolValue == true { line += " (launching)" }
            if let pid = app["pid"]?.intValue { line += "  pid \(pid)" }
            if let rss = app["residentBytes"]?.intValue { line += "  \(rss >> 20) MiB" }
            if let tasks = app["backgroundTasks"]?.arrayValue {
                // Their ids: "tasks 2" read as a count.
                let ids = tasks.compactMap(\.intValue).map { "#\($0)" }
                line += "  \(ids.count == 1 ? "task" : "tasks") \(shortList(ids))"
                if let remaining = app["backgroundTimeRemaining"]?.doubleValue { line += " (\(formatSeconds(remaining)) s left)" }
            }
            print(line)
        }
    }
}

struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "The timeline of app callbacks, state changes, system events and errors.")
    @Flag(help: "Keep printing new events as they happen.") var follow = false
    @Flag(help: "One JSON object per line: seq, time, app, kind, name, detail.") var json = false
    @Option(help: ArgumentHelp("Only this app's events: its bundle id, or the last part of it as the timeline shows it (with --follow, a bundle id not installed yet is waited for).", valueName: "bundle-id")) var app: String?
    @Option(parsing: .unconditional, help: "Only events after this seq (--seq or --json shows each event's).") var after: Int = 0
    @Flag(help: "Start each line with the event's seq, for --after.") var seq = false
    @OptionGroup var client: ClientOptions

    func validate() throws {
        if app?.isEmpty == true { throw ValidationError("--app needs a bundle id, not an empty one") }
        if after < 0 || after > EventLog.largestSeq { throw ValidationError("--after takes a seq from 0 to 2^53 (got \(after))") }
        if seq, json { throw ValidationError("--seq numbers text lines; --json lines have their seq already") }
    }

    func run() throws {
        var request: [String: JSONValue] = ["command": "events", "after": JSONValue(after), "follow": .bool(follow)]
        if let app { request["appFilter"] = .string(app) }
        let socket = try client.connect()
        try client.send(.object(request), on: socket)
        let reply = try client.receiveReply(on: socket, waitsForApps: false)
        let events = try client.result(of: reply).arrayValue ?? []
        // Past the daemon's window (the latest 100,000 events, and 4 MiB of
        // the log read back at its start), events were skipped without a word.
        if app == nil, after > 0, let first = events.first?["seq"]?.intValue, first > after + 1 {
            printError(
                "offstage: warning: events \(after + 1) to \(first - 1) are no longer in the daemon's memory; the data directory's events.jsonl has them (unless it was moved or removed since)")
        }
        // Apps are named by the last part of their id, in full where two share it.
        // (JSON lines carry whole ids: no need to ask.)
        let installed = json ? [] : client.lookUp(["command": "apps"])?.arrayValue?.compactMap { $0["bundleID"]?.stringValue } ?? []
        var naming = AppNaming(bundleIDs: installed + events.compactMap { $0["app"]?.stringValue })
        // One time column for the lines printed; a follower's widens when it must.
        var width = 6
        if json {
            for event in events { printJSON(event) }
        } else {
            // Read once, for the column's width and the lines.
            let parsed = events.compactMap { try? Event(json: $0) }
            width = Event.timeWidth(for: parsed)
            for event in parsed { showLine(event, &naming, &width) }
        }
        guard follow else { return }
        // The daemon follows a bundle id nobody knows yet (an app installed
        // later), and says so: a typo would look like "no events yet".
        if let app, reply["waiting"]?.boolValue == true {
            printError("offstage: warning: no app \(app) is installed or in the event log yet; waiting for its events")
        }
        var stoppedCleanly = false
        do {
            // Events come when they happen: no limit on the wait for the next.
            socket.deadline = nil
            while let line = try socket.receive() {
                if let event = line["event"] {
                    show(event, &naming, &width)
                    // Sticky: a store or log failure may still be logged after it.
                    stoppedCleanly = stoppedCleanly || event["name"]?.stringValue == "daemonStopped"
                }
            }
        } catch {
            fail("lost the daemon: \(error)")
        }
        // The stream ends after daemonStopped when the daemon stops; otherwise it died.
        if !stoppedCleanly { fail("the daemon closed the connection (it died or was killed)") }
    }

    func show(_ json: JSONValue, _ naming: inout AppNaming, _ width: inout Int) {
        if self.json {
            printJSON(json)
        } else if let event = try? Event(json: json) {
            showLine(event, &naming, &width)
        }
    }

    /// Prints the event's line, its time in a column `width` wide (widened when it must be).
    func showLine(_ event: Event, _ naming: inout AppNaming, _ width: inout Int) {
        if let app = event.app { naming.insert(app) }
        width = max(width, Event.timeWidth(for: CollectionOfOne(event)))
        let line = event.humanLine(naming: naming, timeWidth: width)
        guard seq else { return printLine(line) }
        // Right-aligned in 6 places (a longer seq shifts its line only).
        let number = String(event.seq)
        printLine(String(repeating: " ", count: max(0, 6 - number.count)) + number + "  " + line)
    }
}

struct ClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock", abstract: "The daemon's clock: `now`, or `advance DURATION` (virtual clock only).",
        discussion: "Durations: 90 (seconds), 250ms, 30s, 5m, 2h, 1d, 1m30s.")
    enum Action: String, ExpressibleByArgument, CaseIterable {
        case now, advance
    }
    @Argument(help: "now or advance.") var action: Action
    // Every word that is not a known option, so that a negative duration
    // (`-5s`) reaches the checks below: ArgumentParser took it for an
    // option and dropped it.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("How far to advance.", valueName: "duration"))
    var words: [String] = []
    @OptionGroup var client: ClientOptions

    /// The duration given (`--`, once needed before a negative one, is not one).
    var duration: String? { words.first { $0 != "--" } }

    func validate() throws {
        if action == .advance, let duration, duration.hasPrefix("-"), duration.dropFirst().first?.isNumber == true {
            throw ValidationError("the clock only goes forward: \(duration) is not a duration")
        }
        let words = try operands(words)
        if action == .advance {
            guard let duration else { throw ValidationError("clock advance needs a duration, e.g. 5m") }
            if words.count > 1 { throw ValidationError("clock advance takes one duration (got \(words.joined(separator: " ")))") }
            guard parseDuration(duration) != nil else {
                throw ValidationError("not a duration: \(duration) (try 30s, 5m, 1h; at most 36500d, 100 years)")
            }
        } else if !words.isEmpty {
            throw ValidationError("clock now takes no duration (got \(words.joined(separator: " ")))")
        }
    }

    func run() throws {
        var request: [String: JSONValue] = ["command": "clock", "action": .string(action.rawValue)]
        if let duration, let parsed = parseDuration(duration) { request["seconds"] = JSONValue(parsed.seconds) }
        let clock = try client.send(.object(request))
        print("\(clock["mode"]?.stringValue ?? "?") clock at \(formatSeconds(clock["time"]?.doubleValue ?? 0)) s")
        // Queued behind a hung app, a memory pressure ran as the clock reached its watchdog.
        for pressure in clock["memoryPressure"]?.arrayValue ?? [] {
            print("queued memory pressure: " + MemoryCommand.outcome(of: pressure))
        }
    }
}
