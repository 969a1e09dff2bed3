import Foundation
import OffstageCore
import Yams

/// A scenario: apps to install, a timeline of actions at virtual times, and
/// the callbacks each app must see. See `docs/scenarios.md` for the format.
public struct Scenario: Sendable {
    public struct Step: Sendable {
        /// Absolute virtual time of the step.
        public var at: Duration
        /// The action, as words: `["launch", "com.example.App"]`.
        public var action: [String]
        /// The step is expected to be refused.
        public var expectFailure: Bool
        public var line: Int
    }

    public struct Expectation: Sendable {
        public var app: String
        public var callbacks: [String]?
        public var finalState: AppState?
        /// The line of the app's key.
        public var line: Int
        /// The line of each expected callback, and of `finalState`: where
        /// a failed expectation points.
        public var callbackLines: [Int] = []
        public var finalStateLine: Int?
    }

    public var name: String
    public var file: String
    public var profile: String
    public var appPaths: [String]
    /// The line of each of ``appPaths`` in the file.
    public var appLines: [Int]
    public var steps: [Step]
    /// Time the scenario runs to after its last step.
    public var end: Duration?
    /// The line of `end`.
    public var endLine: Int?
    public var hangGrace: Duration
    public var expectations: [Expectation]

    /// The shortest hang grace accepted: with none, a healthy app's answer
    /// can come after the clock has run on past its watchdog.
    public static let shortestHangGrace = Duration.milliseconds(10)
    /// The keys a background service's launch sets (`launch-background ID KEY`).
    static let serviceLaunchOptionKeys = [
        LaunchOptionKey.location, LaunchOptionKey.remoteNotification, LaunchOptionKey.newsstandDownloads,
        "UIApplicationLaunchOptionsBluetoothCentralsKey", "UIApplicationLaunchOptionsBluetoothPeripheralsKey",
    ]
    /// Every `UIApplicationLaunchOptions…Key` UIKit defines.
    static let launchOptionKeys = Set(serviceLaunchOptionKeys + [
        "UIApplicationLaunchOptionsURLKey", "UIApplicationLaunchOptionsSourceApplicationKey",
        "UIApplicationLaunchOptionsAnnotationKey", "UIApplicationLaunchOptionsLocalNotificationKey",
        "UIApplicationLaunchOptionsShortcutItemKey", "UIApplicationLaunchOptionsUserActivityDictionaryKey",
        "UIApplicationLaunchOptionsUserActivityTypeKey", "UIApplicationLaunchOptionsCloudKitShareMetadataKey",
        "UIApplicationLaunchOptionsEventAttributionKey",
    ])
    /// The longest: a run (or daemon) held up longer by one hung callback is
    /// more likely a mistyped unit than a wish.
    public static let longestHangGrace = Duration.seconds(3600)
}

/// A scenario file that does not parse: file, line, and what was expected.
public struct ScenarioError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public var description: String {
        line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)"
    }
}

/// The actions a step may take, with the words each needs after its verb.
enum ScenarioVerb {
    /// Each action's number of words after it, and how it is written (for
    /// the error when its words do not fit).
    static let forms: [String: (arity: ClosedRange<Int>, usage: String)] = [
        "launch": (1...1, "launch ID"), "home": (0...0, "home"), "lock": (0...0, "lock"), "unlock": (0...0, "unlock"),
        "switcher": (1...2, "switcher show | hide | kill ID"), "alert": (1...1, "alert show | dismiss | reply"),
        "memory": (1...2, "memory warning | memory pressure [SIZE]"),
        "device": (1...2, "device battery LEVEL | orientation O | locale L | time-jump | defaults"),
        "wake": (2...2, "wake ID CALLBACK"), "launch-background": (1...2, "launch-background ID [LAUNCH_OPTION_KEY]"),
        "advance": (1...1, "advance DURATION"),
    ]
}

extension Scenario {
    /// What the scenario read from standard input (`-`) is called in
    /// messages; its app paths are relative to the working directory.
    public static let standardInputName = "(standard input)"

    /// Reads and checks a scenario file; `-` reads standard input (as does
    /// a pipe or `/dev/stdin` named as the file).
    /// - Throws: ``ScenarioError`` with the file and line of the problem.
    public static func load(path: String) throws -> Scenario {
        let name = path == "-" ? standardInputName : path
        let kind = path == "-" ? .other : FileKind(atPath: path)
        switch kind {
        case nil:
            let code = errno
            let why = code == ENOENT || code == ENOTDIR ? "no such file" : "cannot reach the file (\(String(cString: strerror(code))))"
            throw ScenarioError(file: path, line: nil, message: why)
        case .directory: throw ScenarioError(file: path, line: nil, message: "a directory, not a scenario file")
        default: break
        }
        // A stream (standard input, a pipe, a device) has no size to read up
        // to: read it to its end. Its app paths are relative to the working
        // directory.
        let stream = kind == .other
        // `-` is standard input here only: `--check -` named a file.
        guard let data = path == "-" ? (try? FileHandle.standardInput.readToEnd()) ?? Data() : readWhole(path) else {
            let why = FileManager.default.isReadableFile(atPath: path) ? "" : " (no permission)"
            throw ScenarioError(file: path, line: nil, message: "cannot read the file\(why)")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            let (line, byte) = firstInvalidUTF8(data)
            throw ScenarioError(file: name, line: line, message: "not UTF-8 text (byte 0x\(String(format: "%02X", byte)))")
        }
        return try parse(text, file: name, base: stream ? "" : nil)
    }

    /// The text without the byte order mark it starts with, if it does:
    /// YAML allows one there, and editors on Windows write one. Libyaml,
    /// under Yams, took it for content ("did not find expected <document
    /// start>" at line 2); a golden file's first line differed by it.
    public static func withoutByteOrderMark(_ text: String) -> String {
        text.unicodeScalars.first == "\u{FEFF}" ? String(text.unicodeScalars.dropFirst()) : text
    }

    /// The line (LF, CRLF or CR ends one) and value of the first byte that
    /// is not part of a valid UTF-8 sequence; data that is valid UTF-8
    /// has none, and gives line 1 and 0.
    static func firstInvalidUTF8(_ data: Data) -> (line: Int, byte: UInt8) {
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = data.makeIterator()
        var offset = 0
        decoding: while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return (1, 0)
            case .error: break decoding
            }
        }
        var line = 1
        var previous: UInt8 = 0
        for byte in data.prefix(offset) {
            // A CR ends a line, and the LF of a CRLF ends none of its own.
            if byte == 0x0D || (byte == 0x0A && previous != 0x0D) { line += 1 }
            previous = byte
        }
        return (line, data[data.startIndex + offset])
    }

    /// - Parameter base: the directory app paths are relative to (nil: the
    ///   file's; "": the working directory).
    public static func parse(_ text: String, file: String, base: String? = nil) throws -> Scenario {
        func error(_ node: Node?, _ message: String) -> ScenarioError {
            ScenarioError(file: file, line: node?.mark.map { $0.line }, message: message)
        }
        let root: Node
        do {
            guard let composed = try Yams.compose(yaml: withoutByteOrderMark(text)) else { throw error(nil, "the file is empty") }
            root = composed
        } catch let yaml as YamlError {
            throw ScenarioError(file: file, line: yamlLine(yaml), message: "not valid YAML: \(yamlSummary(yaml))")
        }
        guard let top = root.mapping else { throw error(root, "expected a mapping with name, apps, steps and expect") }
        let known: Set<String> = ["name", "description", "profile", "apps", "steps", "end", "hangGrace", "expect"]
        for (key, _) in top where !known.contains(key.string ?? "") {
            throw error(key, "unknown key \"\(key.string ?? "?")\" (expected one of \(known.sorted().joined(separator: ", ")))")
        }
        func duration(_ node: Node, _ what: String) throws -> Duration {
            guard let scalar = node.scalar?.string, let parsed = parseDuration(scalar) else {
                throw error(node, "expected a duration for \(what), such as 10s, 5m or 1h30m (at most 36500d)")
            }
            return parsed
        }

        /// A text value: `nil` when absent, an error when not a scalar.
        func textValue(_ key: String) throws -> String? {
            guard let node = top[key] else { return nil }
            guard let value = node.scalar?.string else { throw error(node, "\(key) is a text, not a list or a mapping") }
            return value
        }
        let name = try textValue("name") ?? (file as NSString).lastPathComponent
        let profile = try textValue("profile") ?? "ios7"
        if LifecyclePolicy.profile(named: profile) == nil {
            throw error(top["profile"], "unknown profile \"\(profile)\" (ios6, ios7 or ios13)")
        }
        let base = base ?? parentPath(of: file)
        guard let appsNode = top["apps"], let appList = appsNode.sequence else {
            throw error(top["apps"] ?? root, "expected \"apps\": a list of app directories")
        }
        let appLines = appList.map { $0.mark?.line ?? 0 }
        let appPaths = try appList.map { node -> String in
            if node.null != nil, let written = node.scalar?.string, !written.isEmpty {
                throw error(node, "expected an app directory path (\(written) is YAML's null; quote it)")
            }
            guard let path = node.null == nil ? node.string : "" else { throw error(node, "expected an app directory path") }
            guard !path.isEmpty else { throw error(node, "expected an app directory path, not an empty one") }
            if path.hasPrefix("/") { return path }
            let joined = base.isEmpty ? path : base + "/" + path
            // "./" keeps `~/x` from being read as the home's (other paths are shown as written).
            return joined.hasPrefix("~") ? "./" + joined : joined
        }

        var steps: [Step] = []
        var time = Duration.zero
        // `steps:` with nothing after it is no steps, as a missing `steps` is.
        if let stepsNode = top["steps"], stepsNode.null == nil {
            guard let list = stepsNode.sequence else { throw error(stepsNode, "expected \"steps\": a list") }
            for item in list {
                guard let step = item.mapping else { throw error(item, "expected a step such as {at: 10s, do: home}") }
                for (key, _) in step where !["at", "after", "do", "expectFailure"].contains(key.string ?? "") {
                    throw error(key, "unknown step key \"\(key.string ?? "?")\" (at, after, do, expectFailure)")
                }
                if let at = step["at"], step["after"] != nil {
                    throw error(at, "a step has \"at\" or \"after\", not both")
                }
                // What set the step's time, named if the time is past the clock's end.
                var timeNode = item
                if let at = step["at"] {
                    let absolute = try duration(at, "at")
                    if absolute < time { throw error(at, "steps must be in time order (this one is before the previous)") }
                    time = absolute
                    timeNode = at
                } else if let after = step["after"] {
                    time += try duration(after, "after")
                    timeNode = after
                }
                guard let doNode = step["do"] else {
                    throw error(item, "a step needs \"do\", e.g. do: launch com.example.App")
                }
                guard let command = doNode.string, !command.allSatisfy(\.isWhitespace) else {
                    // An empty `do:` was `unknown action ""`; a list, "a step needs do".
                    let what = doNode.sequence != nil ? "a list" : doNode.mapping != nil ? "a mapping" : "empty"
                    throw error(doNode, "\"do\" takes an action as text, e.g. do: launch com.example.App (this one is \(what))")
                }
                let words = command.split(separator: " ").map(String.init)
                guard let verb = words.first, let (arity, usage) = ScenarioVerb.forms[verb] else {
                    throw error(
                        doNode, "unknown action \"\(command)\" (known: \(ScenarioVerb.forms.keys.sorted().joined(separator: ", ")))")
                }
                if let option = words.first(where: { $0.hasPrefix("--") }) {
                    throw error(doNode, "a step takes no options such as \(option): \(usage)")
                }
                guard arity.contains(words.count - 1) else {
                    let count = arity.lowerBound == arity.upperBound ? "\(arity.lowerBound)" : "\(arity.lowerBound) to \(arity.upperBound)"
                    throw error(
                        doNode, "\"\(verb)\" takes \(count) \(arity.upperBound == 1 ? "argument" : "arguments"): \(usage)")
                }
                if verb == "launch-background", words.count == 3, !Self.launchOptionKeys.contains(words[2]) {
                    // Any word was delivered as a key set to true: a typo passed silently.
                    throw error(doNode, "\(words[2]) is not a launch option key; a service sets \(Self.serviceLaunchOptionKeys.joined(separator: ", "))")
                }
                if verb == "wake" {
                    // The daemon's own check, before the run rather than at its step.
                    do { try Springboard.requireServiceCallback(words[2]) } catch let refusal { throw error(doNode, refusal.message) }
                }
                if verb == "switcher", !["show", "hide", "kill"].contains(words[1]) {
                    throw error(doNode, "switcher takes show, hide or kill ID, not \"\(words[1])\"")
                }
                if verb == "switcher", (words[1] == "kill") != (words.count == 3) {
                    throw error(doNode, words[1] == "kill" ? "switcher kill needs the app's bundle id" : "switcher \(words[1]) takes nothing more")
                }
                if verb == "device" {
                    // The daemon's own check, before the run rather than at its step.
                    if let problem = deviceChangeProblem(ScenarioRunner.request(for: words)) { throw error(doNode, problem) }
                }
                if verb == "memory", !["warning", "pressure"].contains(words[1]) {
                    throw error(doNode, "memory takes warning or pressure [SIZE], not \"\(words[1])\"")
                }
                if verb == "memory", words.count == 3, words[1] == "warning" {
                    throw error(doNode, "memory warning takes nothing more")
                }
                if verb == "memory", words.count == 3, words[1] == "pressure", parseByteSize(words[2]) == nil {
                    throw error(doNode, "memory pressure takes a size such as 500K, 200M or 1G, not \"\(words[2])\"")
                }
                if verb == "alert", !["show", "dismiss", "reply"].contains(words[1]) {
                    throw error(doNode, "alert takes show, dismiss or reply, not \"\(words[1])\"")
                }
                var expectFailure = false
                if let flag = step["expectFailure"] {
                    guard let value = flag.bool else { throw error(flag, "expectFailure is true or false") }
                    expectFailure = value
                }
                if verb == "advance" {
                    guard let amount = parseDuration(words[1]) else {
                        throw error(doNode, "expected a duration for advance, such as 10s, 5m or 1h30m (at most 36500d)")
                    }
                    if expectFailure { throw error(doNode, "advance only moves the clock; it cannot be expected to fail") }
                    // A step of its own: the run goes on to its time even when it is the last.
                    time += amount
                    timeNode = doNode
                }
                guard time <= ClockTime.latest - .zero else {
                    throw error(timeNode, "this step comes after the virtual clock's end, 250 years after its start")
                }
                steps.append(Step(at: time, action: words, expectFailure: expectFailure, line: doNode.mark?.line ?? 0))
            }
        }
        let end = try top["end"].map { try duration($0, "end") }
        if let end, let endNode = top["end"], end < time {
            throw error(endNode, "end (\(formatSeconds(end.seconds)) s) is before the last step (\(formatSeconds(time.seconds)) s)")
        }
        let hangGrace = try top["hangGrace"].map { try duration($0, "hangGrace") } ?? .seconds(2)
        if hangGrace < Scenario.shortestHangGrace, let node = top["hangGrace"] {
            throw error(node, "hangGrace must be at least 10ms: a healthy app needs some real time to answer")
        }
        if hangGrace > Scenario.longestHangGrace, let node = top["hangGrace"] {
            throw error(node, "hangGrace must be at most an hour, as the daemon's --hang-grace (not \(node.scalar?.string ?? "\(formatSeconds(hangGrace.seconds)) s"))")
        }

        var expectations: [Expectation] = []
        if let expectNode = top["expect"] {
            guard let mapping = expectNode.mapping else { throw error(expectNode, "expected \"expect\": a mapping of bundle id to callbacks") }
            for (key, value) in mapping {
                guard let app = key.string else { throw error(key, "expected a bundle id") }
                var expectation = Expectation(app: app, callbacks: nil, finalState: nil, line: key.mark?.line ?? 0)
                // `- applicationDidBecomeActive:` reads as a one-key mapping in
                // YAML; take it as the selector it plainly is.
                func callbackName(_ node: Node) throws -> String {
                    if let name = node.string { return name }
                    if let pairs = node.mapping, pairs.count == 1, let (key, value) = pairs.first,
                        let name = key.string, value.null != nil || value.string == ""
                    {
                        return name + ":"
                    }
                    throw error(node, "expected a callback name such as applicationDidBecomeActive:")
                }
                /// The expected callbacks, each with its line.
                func expectCallbacks(_ list: Node.Sequence) throws {
                    expectation.callbacks = try list.map(callbackName)
                    expectation.callbackLines = list.map { $0.mark?.line ?? expectation.line }
                }
                if let list = value.sequence {
                    try expectCallbacks(list)
                } else if let object = value.mapping {
                    for (key, _) in object where !["callbacks", "finalState"].contains(key.string ?? "") {
                        throw error(key, "unknown expectation key \"\(key.string ?? "?")\" (callbacks, finalState)")
                    }
                    if let node = object["callbacks"] {
                        guard let list = node.sequence else { throw error(node, "callbacks is a list of callback names") }
                        try expectCallbacks(list)
                    }
                    if let stateNode = object["finalState"] {
                        guard let raw = stateNode.string, let state = AppState(rawValue: raw) else {
                            throw error(stateNode, "finalState must be one of \(AppState.allCases.map(\.rawValue).joined(separator: ", "))")
                        }
                        expectation.finalState = state
                        expectation.finalStateLine = stateNode.mark?.line
                    }
                    // `{}` checked nothing and counted as an expectation met.
                    if expectation.callbacks == nil, expectation.finalState == nil {
                        throw error(value, "an expectation needs callbacks, finalState or both")
                    }
                } else {
                    throw error(value, "expected a list of callbacks, or {callbacks: […], finalState: …}")
                }
                expectations.append(expectation)
            }
        }
        return Scenario(
            name: name, file: file, profile: profile, appPaths: appPaths, appLines: appLines, steps: steps,
            end: end, endLine: top["end"]?.mark?.line, hangGrace: hangGrace,
            expectations: expectations)
    }

    static func yamlLine(_ error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        case .reader(_, let offset?, _, let yaml):
            // Yams gives the offset in characters ("\r\n" is one).
            return yaml.prefix(offset).count(where: \.isNewline) + 1
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Yams marks the key's first appearance; the mistake is the
            // second, the next line down that starts with the key in the
            // same column.
            guard let key = duplicates.first, context.mark.column >= 1 else { return context.mark.line }
            // By line ends of every kind: split on "\n", a CRLF file (where
            // "\r\n" is one character) was one line, and the loop's range trapped.
            let lines = context.text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            let indent = context.mark.column - 1
            for index in context.mark.line..<max(context.mark.line, lines.count) {
                let line = lines[index]
                guard line.count > indent else { continue }
                var rest = line.dropFirst(indent)
                // Either copy may be quoted (`"at": 2s`), the other not.
                var quote: Character?
                if let first = rest.first, first == "\"" || first == "'" {
                    quote = first
                    rest = rest.dropFirst()
                }
                guard rest.hasPrefix(key) else { continue }
                rest = rest.dropFirst(key.count)
                if let quote {
                    guard rest.first == quote else { continue }
                    rest = rest.dropFirst()
                }
                if line.prefix(indent).allSatisfy({ $0 == " " || $0 == "-" }), rest.drop(while: { $0 == " " }).first == ":" {
                    return index + 1
                }
            }
            return context.mark.line
        default:
            return nil
        }
    }

    static func yamlSummary(_ error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _):
            // `[applicationDidBecomeActive:]`: in a flow list the colon ends a key.
            if problem.contains("unexpected ':'") {
                return problem + " (quote names that end in ':' inside [ ], such as [\"applicationDidBecomeActive:\"])"
            }
            // `do: wake ID application:performFetchWithCompletionHandler:`: the
            // selector's last colon makes the line a key (not a mis-indented
            // key or `name: a: b`, whose lines do not end in one).
            if problem.contains("mapping values are not allowed"), case .scanner(_, _, let mark, let yaml) = error,
                let line = yaml.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).dropFirst(mark.line - 1).first,
                line.trimmingCharacters(in: .whitespaces).hasSuffix(":")
            {
                return problem + " (quote a value that ends in ':', such as do: \"wake ID application:performFetchWithCompletionHandler:\")"
            }
            return problem
        case .duplicatedKeysInMapping(let duplicates, _):
            return "a key appears twice in one mapping: \(duplicates.joined(separator: ", "))"
        case .reader(let problem, _, let value, _):
            // "control characters are not allowed", and which one.
            return problem + (value >= 0 ? " (U+\(String(format: "%04X", value)))" : "")
        default:
            return "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
        }
    }
}
