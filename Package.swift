// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Offstage",
    products: [
        .executable(name: "offstage", targets: ["offstage"]),
        .library(name: "OffstageCore", targets: ["OffstageCore"]),
        .library(name: "OffstageDaemon", targets: ["OffstageDaemon"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(name: "OffstageCore"),
        .systemLibrary(
            name: "CGPS",
            pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]
        ),
        .target(
            name: "OffstageDaemon",
            dependencies: ["OffstageCore", "CGPS"]
        ),
        .executableTarget(
            name: "offstage",
            dependencies: [
                "OffstageCore",
                "OffstageDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "LocationBenchmarks",
            dependencies: ["OffstageCore", "OffstageDaemon"],
            path: "Benchmarks/LocationBenchmarks"
        ),
        .testTarget(name: "OffstageCoreTests", dependencies: ["OffstageCore"]),
        .testTarget(name: "OffstageDaemonTests", dependencies: ["OffstageDaemon", "OffstageCore"]),
    ],
    swiftLanguageModes: [.v6]
)
