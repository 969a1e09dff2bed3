import OffstageCore

/// One entry of the event log, as `offstage events --json` prints it.
public struct Event: Equatable, Sendable {
    public var seq: Int
    /// Seconds since the daemon's clock epoch.
    public var time: Double
    public var app: String?
    public var kind: EventKind
    public var name: String
    public var detail: JSONValue

    public init(seq: Int, time: Double, app: String?, kind: EventKind, name: String, detail: JSONValue) {
        self.seq = seq
        self.time = time
        self.app = app
        self.kind = kind
        self.name = name
        self.detail = detail
    }

    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "seq": JSONValue(seq), "time": JSONValue(time), "kind": .string(kind.rawValue), "name": .string(name),
            "detail": detail,
        ]
        if let app { object["app"] = .string(app) }
        return .object(object)
    }

    /// Appends the event's JSON (the same bytes as `json`), without building
    /// an intermediate object: the event log writes every event.
    public func write(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        if let app {
            out.append(contentsOf: #""app":"#.utf8)
            JSONValue.writeString(app, into: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""detail":"#.utf8)
        detail.write(into: &out)
        out.append(contentsOf: #","kind":"#.utf8)
        JSONValue.writeString(kind.rawValue, into: &out)
        out.append(contentsOf: #","name":"#.utf8)
        JSONValue.writeString(name, into: &out)
        out.append(contentsOf: #","seq":"#.utf8)
        JSONValue.writeInteger(seq, into: &out)
        out.append(contentsOf: #","time":"#.utf8)
        JSONValue.writeNumber(time, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    public init(json: JSONValue) throws {
        guard let seq = json["seq"]?.intValue, let time = json["time"]?.doubleValue,
            let kindName = json["kind"]?.stringValue, let kind = EventKind(rawValue: kindName),
            let name = json["name"]?.stringValue
        else { throw DaemonError(.badRequest, "malformed event: \(json.jsonText)") }
        self.init(
            seq: seq, time: time, app: json["app"]?.stringValue, kind: kind, name: name,
            detail: json["detail"] ?? .emptyObject)
    }

    /// The width of the time's whole seconds that lines all of `events`
    /// up: 6, or the widest past 999,999 s (11.6 days; a scenario may run
    /// 36,500 days), whose lines shifted the app column.
    public static func timeWidth(for events: some Sequence<Event>) -> Int {
        events.reduce(6) { width, event in
            let text = formatSeconds(event.time)
            return max(width, text.distance(from: text.startIndex, to: text.firstIndex(of: ".") ?? text.endIndex))
        }
    }

    /// The event as a console line, in the spirit of the seeds' State Lab logs:
    /// `    10      StateLab  applicationDidEnterBackground:` (and
    /// `    26.84   …` for a time with a fraction).
    public var humanLine: String { humanLine(naming: .lastParts) }

    /// The console line, naming apps as `naming` does, its time's whole
    /// seconds right-aligned in `timeWidth` (``timeWidth(for:)`` of the
    /// lines printed together keeps them in one column).
    public func humanLine(naming: AppNaming, timeWidth: Int = 6) -> String {
        let padded = alignedSeconds(time, wholeWidth: timeWidth)
        let who = app.map(naming.name(of:)) ?? "system"
        let detailText: String
        if case .object(let members) = detail, members.isEmpty {
            detailText = ""
        } else {
            detailText = "  " + detail.jsonText
        }
        switch kind {
        case .callback: return "\(padded)  \(who)  \(name)\(detailText)"
        case .state: return "\(padded)  \(who)  -> \(name)"
        case .system: return "\(padded)  \(who)  [\(name)]\(detailText)"
        case .error: return "\(padded)  \(who)  ERROR \(name)\(detailText)"
        }
    }
}

/// How the console format names an app: by the last part of its bundle id
/// (`StateLab`), as the seeds' logs do, but in full where two of the apps
/// it knows share that last part, so that their lines (and golden files)
/// cannot be mistaken for each other's.
public struct AppNaming: Sendable {
    /// The first id seen with each last part.
    private var owner: [String: String] = [:]
    private var shared: Set<String> = []

    /// Last parts only, whatever the ids.
    public static let lastParts = AppNaming(bundleIDs: [])

    public init(bundleIDs: some Sequence<String>) {
        for id in bundleIDs { insert(id) }
    }

    /// Makes an id known (`events --follow` learns them as they come): if it
    /// shares its last part with another, both are named in full from now on.
    public mutating func insert(_ bundleID: String) {
        let short = Self.lastPart(of: bundleID)
        if let other = owner[short], other != bundleID { shared.insert(short) } else { owner[short] = bundleID }
    }

    public func name(of bundleID: String) -> String {
        let short = Self.lastPart(of: bundleID)
        return shared.contains(short) ? bundleID : short
    }

    /// `StateLab` for `com.offstage.samples.StateLab`.
    public static func lastPart(of bundleID: String) -> String {
        bundleID.split(separator: ".").last.map(String.init) ?? bundleID
    }
}

extension Event {
    /// A queued input refused when it ran (`refused`): its ticket and why.
    public var refusal: (ticket: Int, reason: String)? {
        guard kind == .error, name == "refused", let ticket = detail["ticket"]?.intValue else { return nil }
        return (ticket, detail["reason"]?.stringValue ?? "refused")
    }
}
