import ArgumentParser

/// The `offstage` command (this root is replaced by the trunk's).
@main
struct Offstage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offstage",
        abstract: "Emulate iOS-style multitasking on Linux.",
        subcommands: [GPSCommand.self]
    )
}
