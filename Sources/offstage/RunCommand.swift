import ArgumentParser
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run a scenario (todo).")
    func run() async throws {}
}
