import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario in virtual time with a private daemon, print its timeline, check its expectations.",
        discussion: """
            Exits 1 when an expectation fails, a step fails unexpectedly, or --check finds a difference. \
            --record writes the timeline as a golden file; --check compares against one (pids and \
            paths are left out of both). Interrupted (Ctrl-C), the run stops its apps and exits 130. \
            The format is described in docs/scenarios.md.
            """)

    @Argument(help: ArgumentHelp("The scenario file (- for standard input; a stream's app paths are relative to the working directory).", valueName: "scenario.yaml")) var scenario: String
    @Flag(help: "Print the timeline as JSON lines (the progress and the PASS line stay on standard error).") var json = false
    @Flag(help: "Print only what fails: no timeline, no progress, no PASS line.") var quiet = false
    @Option(help: ArgumentHelp("Write the timeline to this golden file.", valueName: "golden")) var record: String?
    @Option(help: ArgumentHelp("Compare the timeline with this golden file.", valueName: "golden")) var check: String?

    func validate() throws {
        if scenario.isEmpty { throw ValidationError("the scenario file is an empty path (- reads standard input)") }
        if record?.isEmpty == true { throw ValidationError("--record needs a file, not an empty path") }
        if check?.isEmpty == true { throw ValidationError("--check needs a file, not an empty path") }
        try requireUTF8(scenario, "scenario.yaml")
        if let record { try requireUTF8(record, "--record") }
        if let check { try requireUTF8(check, "--check") }
        if let record, let check, isSameFile(record, check) {
            throw ValidationError("--record and --check name the same file (\(check)): recording first would make the check pass")
        }
        // A slip of the shell's completion would replace the scenario with its timeline.
        if let record, isSameFile(record, scenario) {
            throw ValidationError("--record names the scenario file itself (\(scenario)); give the golden file another name")
        }
    }

    /// Writes a golden file through symbolic links (a plain atomic write
    /// replaced the link with a file and left its target as it was), by an
    /// atomic rename that keeps the old file until the new one is whole, with
    /// the old file's mode. A pipe or a device is written in place; a pipe
    /// nobody reads is an error, not a wait for good.
    static func writeGolden(_ text: String, to path: String) throws {
        // Judged by the path as given: the kernel follows /dev/stdout and
        // /proc/self/fd links to a pipe, which read by hand name none.
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            let fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else {
                if errno == ENXIO { throw GoldenWriteError("no process reads the pipe") }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            try handle.write(contentsOf: Data(text.utf8))
            return try handle.close()
        }
        try writeByRename(linkTarget(path)) { try text.write(toFile: $0, atomically: false, encoding: .utf8) }
    }

    /// Where a chain of symbolic links ends (the path itself if it is none),
    /// whether or not a file is there yet.
    static func linkTarget(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            guard FileKind(atPath: current, followingLinks: false) == .symbolicLink,
                let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current)
            else { break }
            let parent = parentPath(of: current)
            current = destination.hasPrefix("/") || parent.isEmpty ? destination : parent + "/" + destination
        }
        return current
    }

    struct GoldenWriteError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Why `path` cannot be written as a file, or nil if it can.
    static func writeProblem(_ path: String) -> String? {
        if path.isEmpty { return "no file name given" }
        // "afile/" was judged by its parent, ".", and failed after the run.
        if path.hasSuffix("/") { return "it ends in \"/\", as a directory does" }
        if let kind = FileKind(atPath: path) {
            if kind == .directory { return "it is a directory" }
            return access(path, W_OK) == 0 ? nil : String(cString: strerror(errno))
        }
        let parent = parentPath(of: path)
        let directory = parent.isEmpty ? "." : parent
        guard FileKind(atPath: directory) == .directory else { return "there is no directory \(directory)" }
        return access(directory, W_OK) == 0 ? nil : "\(directory): \(String(cString: strerror(errno)))"
    }

    func run() async throws {
        // The golden files first: a bad path fails before the scenario takes its time.
        var expected: String?
        if let check {
            // Read as a stream, so that a pipe (`--check <(…)`, /dev/stdin) reads
            // too: String(contentsOfFile:) failed on one, told as "not UTF-8".
            let data = FileKind(atPath: check) == .directory ? nil : readWhole(check)
            guard let data, let text = String(validating: data, as: UTF8.self) else {
                let reason =
                    access(check, R_OK) != 0 ? String(cString: strerror(errno))
                    : FileKind(atPath: check) == .directory ? "it is a directory"
                    : data == nil ? "it cannot be read" : "it is not UTF-8 text"
                fail("cannot read golden file \(check): \(reason)")
            }
            expected = Scenario.withoutByteOrderMark(text)
        }
        if let record, let problem = Self.writeProblem(record) { fail("cannot write \(record): \(problem)") }
        let loaded: Scenario
        do {
            loaded = try Scenario.load(path: scenario)
        } catch let error as ScenarioError {
            fail(error.description)
        }
        if !AppProcessHost.appsDieWithTheDaemon {
            printError("offstage: warning: " + AppProcessHost.setprivMissing("this run"))
        }
        var runner = ScenarioRunner(scenario: loaded, executableSearchPaths: [executableDirectory()])
        let total = loaded.steps.count
        let counter = StepCounter()
        if !quiet {
            // Once the apps are installed: a scenario whose app cannot be
            // installed gives its one error line, not a header before it.
            // With --json, standard output holds only the timeline's objects.
            let header = "scenario: \(loaded.name) (\(total) \(total == 1 ? "step" : "steps"), profile \(loaded.profile))"
            let json = json
            runner.onReady = { if json { printError(header) } else { printLine(header) } }
            runner.onStep = { step in
                let index = counter.next()
                // A step is shown at the time it is issued; an advance's `at` is where it ends.
                var issued = step.at
                var action = step.action.joined(separator: " ")
                if step.action.first == "advance", step.action.count == 2, let amount = parseDuration(step.action[1]) {
                    issued -= amount
                    action += " (to \(formatSeconds(step.at.seconds)) s)"
                }
                FileHandle.standardError.write(Data("  [\(index)/\(total)] \(formatSeconds(issued.seconds)) s: \(action)\n".utf8))
            }
        }
        // Interrupted (Ctrl-C, SIGTERM, SIGHUP), the run stops its daemon, which
        // kills the apps, and removes its directory, instead of leaving them.
        let started = Mutex<(daemon: RunningDaemon?, directory: String?)>((nil, nil))
        runner.onDirectory = { directory in started.withLock { $0.directory = directory } }
        runner.onStart = { daemon in started.withLock { $0.daemon = daemon } }
        TerminationSignals.onTermination { signal in
            let (daemon, directory) = started.withLock { $0 }
            if let daemon {
                let stopped = DispatchSemaphore(value: 0)
                Task {
                    await daemon.stop()
                    stopped.signal()
                }
                stopped.wait()
            }
            if let directory { try? FileManager.default.removeItem(atPath: directory) }
            printError("offstage: interrupted; the scenario's apps are stopped")
            Foundation.exit(128 + signal)
        }
        // A run cut short by the interruption (it may even end normally,
        // its daemon stopping under it): the handler reports and exits.
        let outcome: ScenarioRunner.Outcome
        do {
            outcome = try await runner.run()
            if TerminationSignals.isTerminating { await neverReturning() }
        } catch {
            if TerminationSignals.isTerminating { await neverReturning() }
            switch error {
            case let error as ScenarioError: fail(error.description)
            case let error as DaemonError: fail("\(scenario): \(error.message)")
            default: throw error
            }
        }
        let naming = AppNaming(bundleIDs: outcome.timeline.compactMap(\.app))
        let width = Event.timeWidth(for: outcome.timeline)
        if !quiet {
            for event in outcome.timeline { printLine(json ? event.json.jsonText : event.humanLine(naming: naming, timeWidth: width)) }
        }
        let golden = outcome.timeline.map { $0.humanLine(naming: naming, timeWidth: width) }.joined(separator: "\n") + "\n"
        var failed = !outcome.failures.isEmpty
        for failure in outcome.failures { FileHandle.standardError.write(Data("FAIL \(failure)\n".utf8)) }
        if let record {
            do {
                try Self.writeGolden(golden, to: record)
            } catch {
                let reason = (error as? GoldenWriteError)?.description ?? error.localizedDescription
                fail("cannot write \(record): \(Self.writeProblem(record) ?? reason)")
            }
            if !quiet { FileHandle.standardError.write(Data("recorded \(outcome.timeline.count) events to \(record)\n".utf8)) }
            if failed {
                FileHandle.standardError.write(Data("offstage: warning: \(record) records a run that failed its expectations\n".utf8))
            }
        }
        if let check, let expected {
            if let difference = firstDifference(expected: expected, actual: golden) {
                FileHandle.standardError.write(Data("FAIL timeline differs from \(check):\n\(difference)\n".utf8))
                failed = true
            }
        }
        if let directory = outcome.dataDirectory {
            FileHandle.standardError.write(Data("app logs kept in \(directory)/logs\n".utf8))
        }
        if failed { throw ExitCode(1) }
        if !quiet {
            let count = loaded.expectations.count
            let met = count == 0 ? "no expectations to check" : "\(count) \(count == 1 ? "expectation" : "expectations") met"
            FileHandle.standardError.write(Data("PASS \(loaded.name): \(met)\n".utf8))
        }
    }
}

/// The first differing line of two timelines, as `-expected` / `+actual` with its line number.
/// The first line where the golden timeline (`-`) and this run's (`+`)
/// differ, with what each has there; a side that has ended says so.
func firstDifference(expected: String, actual: String) -> String? {
    func lines(_ text: String) -> [Substring] {
        // LF or CRLF (an editor's or git's doing; in Swift "\r\n" is one
        // character, which "\n" does not split), and nothing else: a line
        // separator an app logged is part of its line.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        // The final newline ends the last line; blank lines after it (an
        // editor's) are no events: a timeline has no blank line.
        while lines.last?.allSatisfy(\.isWhitespace) == true { lines.removeLast() }
        return lines
    }
    let a = lines(expected)
    let b = lines(actual)
    for index in 0..<max(a.count, b.count) {
        let left = index < a.count ? String(a[index]) : "(the golden timeline ends here, after \(a.count) lines)"
        let right = index < b.count ? String(b[index]) : "(this run's timeline ends here, after \(b.count) lines)"
        if left != right {
            // Golden files recorded before the time column was aligned differ in spaces only.
            let spacing = left.split(separator: " ") == right.split(separator: " ")
            let hint = spacing ? "\n(the lines differ only in spacing: re-record the golden file with --record)" : ""
            return "line \(index + 1) (- golden, + this run):\n- \(left)\n+ \(right)" + hint
        }
    }
    return nil
}

final class StepCounter: Sendable {
    private let count = Mutex(0)
    func next() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
}

