// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Offstage",
    products: [
        .executable(name: "offstage", targets: ["offstage"]),
        .library(name: "OffstageKit", targets: ["OffstageKit"]),
        .library(name: "OffstageCore", targets: ["OffstageCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        // Wire messages shared by the daemon and the SDK. Foundation only.
        .target(name: "OffstageProtocol", linkerSettings: [.linkedLibrary("m")]),

        // libgps (gpsd's client library), wrapped without C code.
        .systemLibrary(name: "CGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        // libpulse (PulseAudio's client library) and libsndfile (decoding).
        .systemLibrary(name: "CPulse", pkgConfig: "libpulse", providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        // libmpg123 (libsndfile's MP3 decoder), for the exact length of an MP3 without a Xing header.
        .systemLibrary(name: "CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        // Linux process calls Swift cannot import (pidfd_open, closefrom for posix_spawn).
        .systemLibrary(name: "CLinuxProcess"),

        // Pure logic: lifecycle state machine, policies, scheduler, event model,
        // location engines (significant change, regions, continuous updates),
        // audio player rules and the virtual sound server.
        // No I/O, no wall clock: time is always a parameter.
        .target(
            name: "OffstageCore",
            dependencies: [
                "OffstageProtocol",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),

        // The SDK an app process links: UIKit-shaped API over the wire protocol.
        .target(name: "OffstageKit", dependencies: ["OffstageProtocol"]),

        // Services and adapters: app host, app and control servers, clock
        // drivers, event log, store, scenario runner.
        .target(
            name: "OffstageDaemon",
            dependencies: [
                "OffstageCore",
                "OffstageProtocol",
                "CGPS",
                "CPulse",
                "CSndFile",
                "CMPG123",
                "CLinuxProcess",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),

        .executableTarget(
            name: "offstage",
            dependencies: [
                "OffstageDaemon", "OffstageProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // Sample apps (real processes linking OffstageKit).
        .executableTarget(
            name: "StateLab", dependencies: ["OffstageKit"], path: "samples/StateLab",
            exclude: ["Info.plist"]),
        .executableTarget(
            name: "BlockingApp", dependencies: ["OffstageKit"], path: "samples/misbehaving/BlockingApp",
            exclude: ["Info.plist"]),
        .executableTarget(
            name: "SlowResignApp", dependencies: ["OffstageKit"], path: "samples/misbehaving/SlowResignApp",
            exclude: ["Info.plist"]),
        .executableTarget(
            name: "EndlessTaskApp", dependencies: ["OffstageKit"],
            path: "samples/misbehaving/EndlessTaskApp", exclude: ["Info.plist"]),
        .executableTarget(
            name: "CrashAtLaunchApp", dependencies: ["OffstageKit"],
            path: "samples/misbehaving/CrashAtLaunchApp", exclude: ["Info.plist"]),
        // A test app (not a sample): a timer for 0 s through the SDK.
        .executableTarget(
            name: "ZeroTimerApp", dependencies: ["OffstageKit"],
            path: "Tests/Apps/ZeroTimerApp", exclude: ["Info.plist"]),

        .executableTarget(
            name: "TrunkBenchmarks",
            dependencies: [
                "OffstageDaemon", "OffstageKit", "CLinuxProcess",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/TrunkBenchmarks"
        ),

        .executableTarget(
            name: "LocationBenchmarks",
            dependencies: [
                "OffstageCore", "OffstageDaemon", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/LocationBenchmarks"
        ),

        .executableTarget(
            name: "AudioBenchmarks",
            dependencies: [
                "OffstageCore", "OffstageDaemon", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/AudioBenchmarks"
        ),

        .testTarget(name: "OffstageCoreTests", dependencies: ["OffstageCore"]),
        .testTarget(name: "OffstageProtocolTests", dependencies: ["OffstageProtocol"]),
        .testTarget(name: "OffstageKitTests", dependencies: ["OffstageKit", "OffstageProtocol"]),
        .testTarget(
            name: "OffstageDaemonTests",
            dependencies: [
                "OffstageDaemon", "OffstageCore", "OffstageProtocol", "CLinuxProcess",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                // A store in an older schema, for the tests of its migration.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
