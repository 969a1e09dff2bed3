import Foundation
import OffstageDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Where the benchmarks run: this binary, a scratch directory, the apps.
struct BenchContext {
    let executable: String
    let executableDirectory: String
    let directory: String
    /// The no-op app (this binary).
    let benchApp: String
    /// `samples/StateLab`, when its executable was built next to this one.
    let stateLab: String?

    var apps: [(name: String, path: String)] {
        [("BenchApp", benchApp)] + (stateLab.map { [("StateLab", $0)] } ?? [])
    }

    static func make() throws -> BenchContext {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        let executableDirectory = (executable as NSString).deletingLastPathComponent
        var template = Array("/tmp/offstage-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed") }
        let directory = String(cString: made)
        let benchApp = try BenchApp.writeBundle(in: directory + "/BenchApp", executable: executable)
        return BenchContext(
            executable: executable, executableDirectory: executableDirectory, directory: directory, benchApp: benchApp,
            stateLab: locateStateLab(executableDirectory: executableDirectory))
    }

    /// The sample's directory, when its executable is built next to this
    /// binary and the repository is found above it (or in the working directory).
    static func locateStateLab(executableDirectory: String) -> String? {
        guard FileManager.default.isExecutableFile(atPath: executableDirectory + "/StateLab") else { return nil }
        var candidates = [FileManager.default.currentDirectoryPath]
        var directory = executableDirectory
        for _ in 0..<4 {
            directory = (directory as NSString).deletingLastPathComponent
            candidates.append(directory)
        }
        for root in candidates where FileManager.default.fileExists(atPath: root + "/samples/StateLab/Info.plist") {
            return root + "/samples/StateLab"
        }
        return nil
    }
}

enum BenchmarkDriver {
    static func run(_ options: BenchOptions) async -> Int32 {
        let context: BenchContext
        do {
            context = try .make()
        } catch {
            printError("TrunkBenchmarks: cannot set up: \(error)\n")
            return 1
        }
        print(banner(options, context))
        var report = Report()
        do {
            let wanted = options.only
            for placement in options.placements where !wanted.isDisjoint(with: [.roundtrip, .wake]) {
                try placement.apply()
                report.label = placement.label
                if wanted.contains(.roundtrip) {
                    progress("round trip, \(placement.label) (in rounds alternating with its baselines)")
                    try await RoundTripBenchmark.run(context, iterations: options.iterations, into: &report)
                }
                if wanted.contains(.wake) {
                    progress("wake, \(placement.label) (in rounds alternating with its baseline)")
                    try await WakeBenchmark.run(context, iterations: options.iterations, into: &report)
                }
            }
            try Placement.free.apply()
            report.label = nil
            if wanted.contains(.relaunch) {
                progress("relaunch")
                try await RelaunchBenchmark.run(context, relaunches: options.relaunches, into: &report)
            }
            if wanted.contains(.cycles) {
                progress("home/launch cycles")
                try await CyclesBenchmark.run(context, cycles: options.cycles, into: &report)
            }
        } catch {
            printError("\nTrunkBenchmarks: \(error)\n(data kept in \(context.directory))\n")
            return 1
        }
        print("\n" + report.render(), terminator: "")
        if options.keep {
            print("\ndata kept in \(context.directory)")
        } else {
            try? FileManager.default.removeItem(atPath: context.directory)
        }
        return options.strict && report.failed ? 1 : 0
    }

    static func banner(_ options: BenchOptions, _ context: BenchContext) -> String {
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
        var lines = [
            "Offstage trunk benchmarks\(options.quick ? " (quick)" : "")",
            "  \(ProcessInfo.processInfo.activeProcessorCount) CPUs, load \(load); iterations \(options.iterations), "
                + "relaunches \(options.relaunches), cycles \(options.cycles)",
        ]
        #if DEBUG
            lines.append("  WARNING: debug build; build with -c release for meaningful figures")
        #endif
        if context.stateLab == nil {
            lines.append(
                "  StateLab not found next to this binary: its rows are skipped "
                    + "(swift build -c release --product StateLab)")
        }
        return lines.joined(separator: "\n")
    }

    static func progress(_ what: String) {
        printError("  … \(what)\n")
    }
}
