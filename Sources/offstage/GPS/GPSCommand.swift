import ArgumentParser

/// `offstage gps`: fixtures and gpsd.
struct GPSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gps",
        abstract: "Convert GPS fixtures, feed them to gpsd, and watch gpsd.",
        subcommands: []
    )
}
