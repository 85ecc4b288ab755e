// swift-tools-version:6.1
import Foundation
import PackageDescription

/// The FoodMoment server: its own package, so the server's dependencies (Hummingbird, SwiftNIO) never enter the core
/// package's graph, its library consumers, or the fuzz and sanitizer builds. It depends on the core by path; SwiftPM
/// names a path dependency after its folder, which is whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let core = root.lastPathComponent.lowercased()

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "FoodMomentServer",
    platforms: [.macOS(.v14)],
    products: [.executable(name: "foodmoment-server", targets: ["foodmoment-server"])],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(
            name: "FoodServer",
            dependencies: [
                .product(name: "FoodMomentServices", package: core),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "foodmoment-server",
            dependencies: ["FoodServer", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FoodServerTests",
            dependencies: ["FoodServer", .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "FoodMomentServices", package: core)],
            swiftSettings: swiftSettings
        ),
    ]
)
