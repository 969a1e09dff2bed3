/// A background mode an app declares in `UIBackgroundModes`.
public enum BackgroundMode: String, Sendable, Hashable, CaseIterable, Codable {
    case audio
    case location
    case newsstandContent = "newsstand-content"
}

/// What the lifecycle core needs to know about an installed app.
public struct AppDescriptor: Sendable, Hashable, Codable {
    public var bundleID: String
    public var backgroundModes: Set<BackgroundMode>
    public var exitsOnSuspend: Bool
    public var isNewsstandApp: Bool

    public init(
        bundleID: String, backgroundModes: Set<BackgroundMode> = [], exitsOnSuspend: Bool = false,
        isNewsstandApp: Bool = false
    ) {
        self.bundleID = bundleID
        self.backgroundModes = backgroundModes
        self.exitsOnSuspend = exitsOnSuspend
        self.isNewsstandApp = isNewsstandApp
    }
}
