import Foundation

/// What a run of the built `offstage` binary printed, and its exit status.
struct CommandRun {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the built `offstage` binary as a user would, to its end.
/// - Parameter environment: added to (or replacing in) this process's environment.
func runOffstage(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Paths.products + "/offstage")
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandRun(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}
