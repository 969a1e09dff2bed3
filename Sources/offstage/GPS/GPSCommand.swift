import ArgumentParser

/// `offstage gps`: GPS fixtures and gpsd.
struct GPSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gps",
        abstract: "Convert GPS fixtures, feed them into gpsd, and watch gpsd.",
        subcommands: [GPSConvertCommand.self, GPSWatchCommand.self, GPSFeedCommand.self, GPSFixCommand.self]
    )
}
