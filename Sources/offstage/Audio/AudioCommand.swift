import ArgumentParser

/// `offstage audio`: the playback engine on its own.
struct AudioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio",
        abstract: "Play audio files through the engine, inspect them, and run a private sound server.",
        subcommands: [AudioPlayCommand.self, AudioInfoCommand.self, AudioServerCommand.self]
    )
}
