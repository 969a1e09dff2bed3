import ArgumentParser

@main
struct Offstage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offstage",
        abstract: "iOS-style multitasking for Linux: real app processes under the iOS application lifecycle.",
        discussion: """
            Start a daemon with `offstage daemon`, install an app directory (Info.plist + executable) \
            with `offstage install DIR`, then drive it: `offstage launch ID`, `offstage home`, … \
            `offstage events` shows the timeline of app callbacks. `offstage run SCENARIO.yaml` plays \
            a scenario in virtual time with a private daemon.
            """,
        subcommands: [
            DaemonCommand.self, InstallCommand.self, UninstallCommand.self, AppsCommand.self, LaunchCommand.self,
            HomeCommand.self, LockCommand.self, UnlockCommand.self, SwitcherCommand.self, AlertCommand.self,
            MemoryCommand.self, DeviceCommand.self, StatusCommand.self, EventsCommand.self, ClockCommand.self,
            RunCommand.self, GPSCommand.self, AudioCommand.self,
        ]
    )
}
