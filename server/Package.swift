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
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", "4.1.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .target(
            name: "FoodServer",
            dependencies: [
                .product(name: "FoodMomentServices", package: core),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // ConnectionPoolError: what a lease throws when the pool cannot connect (its circuit breaker), mapped to 503.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "foodmoment-server",
            dependencies: ["FoodServer", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "FoodMomentServices", package: core),
                           .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                           .product(name: "Metrics", package: "swift-metrics"), .product(name: "Prometheus", package: "swift-prometheus")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FoodServerTests",
            dependencies: ["FoodServer", .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "FoodMomentServices", package: core), .product(name: "JWTKit", package: "jwt-kit"),
                           .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "_CryptoExtras", package: "swift-crypto"),
                           .product(name: "PostgresNIO", package: "postgres-nio"),
                           .product(name: "_ConnectionPoolModule", package: "postgres-nio")],
            swiftSettings: swiftSettings
        ),
    ]
)
