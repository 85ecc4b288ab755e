// swift-tools-version:6.1
import Foundation
import PackageDescription

/// One settings array for every Swift target: Swift 6 mode plus the upcoming features that keep
/// imports honest (`InternalImportsByDefault`, `MemberImportVisibility`) and existentials explicit.
let environment = ProcessInfo.processInfo.environment
/// `FOODMOMENT_TARGET_CPU=native` (or `znver4`, `haswell`, …) opts into CPU-specific code generation for the numeric
/// modules; `./foodmoment` sets it, since it runs the binary on the machine that built it.
let targetCPU = environment["FOODMOMENT_TARGET_CPU"].flatMap { $0.isEmpty ? nil : $0 }
/// `FOODMOMENT_OPTIMIZE=1` (set by `./run-tests` and the sanitizer script; implied by a target CPU) adds the unsafe
/// flags below. Without either variable the package has no `unsafeFlags` at all, which SwiftPM requires of a package
/// used as a versioned dependency: the default build is the portable one another package gets.
let optimize = targetCPU != nil || !["", "0"].contains(environment["FOODMOMENT_OPTIMIZE"] ?? "")

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
] + (targetCPU == nil ? [] : [.define("FOODMOMENT_CPU_TUNED")])

/// Hot numeric modules (CNN kernels, resize, barcode scanning), when opted in: `-Ounchecked` in release builds (the
/// kernels check their shapes once with `precondition`) and `-O` in debug builds, because an unoptimised CNN forward
/// takes seconds and would make the model tests crawl; plus `-target-cpu` when asked for. `foodmoment dev bench`
/// measures the difference (docs/benchmarks.md).
let numericSettings: [SwiftSetting] = swiftSettings + (optimize ? [
    .unsafeFlags(["-Ounchecked", "-wmo"], .when(configuration: .release)),
    .unsafeFlags(["-O"], .when(configuration: .debug)),
] : []) + (targetCPU.map { [SwiftSetting.unsafeFlags(["-target-cpu", $0])] } ?? [])

/// Modules that parse untrusted bytes or build tables (nutrition tables, hashing) keep their bounds checks in every
/// build, but when opted in are optimised in debug builds too: the table-building test takes minutes at -Onone.
let checkedSettings: [SwiftSetting] = swiftSettings + (optimize ? [.unsafeFlags(["-O"], .when(configuration: .debug))] : [])

let package = Package(
    name: "FoodMoment",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "foodmoment", targets: ["foodmoment"]),
        .library(name: "FoodMoment", targets: ["FoodMoment"]),
        // What the server package (server/) builds on: the pipeline (and its recognizer), the nutrition tables, barcodes and the diary.
        .library(name: "FoodMomentServices", targets: ["FoodMoment", "FoodCore", "FoodRecognition", "ImageCodecs", "Nutrition", "Barcodes", "MealStore",
                                                      "LLMRefiner", "CurlTransport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // C: setjmp-guarded libjpeg / libpng calls and libheif / libwebp calls, all returning codes and messages;
        // never printf, never exit. libheif is loaded on first use (dlopen; see fm_heif.c), not linked.
        .target(
            name: "CImageShims",
            // With a target CPU, the C is compiled for it too: our 1/8 JPEG decoder (a chain of dependent table lookups
            // and shifts) gains 6-8 % on Zen 4 from `-march=native` (BMI2 shifts, that CPU's scheduling), same pixels.
            cSettings: optimize ? [.unsafeFlags(["-O2"] + (targetCPU.map { ["-march=\($0)"] } ?? []))] : [],
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png16"), .linkedLibrary("z"),
                             .linkedLibrary("webp"), .linkedLibrary("dl")]
        ),
        // C: one blocking libcurl GET with every option we rely on (variadic setopt and callbacks stay in C).
        // libcurl is loaded on first use (dlopen; see fm_curl.c), not linked.
        .target(name: "CCurlShims", linkerSettings: [.linkedLibrary("dl")]),
        // C: SHA-256 through libcrypto (the CPU's SHA extensions) for FoodCore's SHA256.
        .target(name: "CDigest", cSettings: optimize ? [.unsafeFlags(["-O2"])] : [], linkerSettings: [.linkedLibrary("crypto")]),
        // C: glibc's malloc settings (mallopt, from <malloc.h>, which Swift's Glibc module does not import); only
        // executables call it.
        .target(name: "CAllocator"),
        // C: gzip files through zlib for the packed nutrition tables; refuses non-gzip input and caps the output.
        .target(name: "CGzip", cSettings: optimize ? [.unsafeFlags(["-O2"])] : [], linkerSettings: [.linkedLibrary("z")]),
        .target(name: "FoodCore", dependencies: ["CDigest"], swiftSettings: checkedSettings),
        // C: the CNN's reduced-precision GEMM (AVX-512 BF16 intrinsics, chosen at run time from CPUID), which Swift
        // cannot emit.
        .target(name: "CKernels", cSettings: optimize ? [.unsafeFlags(["-O2"])] : []),
        // The HTTP transport adapter; only executables (and tests) import it.
        .target(name: "CurlTransport", dependencies: ["CCurlShims", "FoodCore"], swiftSettings: swiftSettings),
        .target(name: "ImageCodecs", dependencies: ["CImageShims", "FoodCore"], swiftSettings: numericSettings),
        .target(name: "FoodVision", dependencies: ["FoodCore", "CKernels"], swiftSettings: numericSettings),
        .target(name: "Nutrition", dependencies: ["FoodCore", "CGzip"], swiftSettings: checkedSettings),
        .target(name: "Barcodes", dependencies: ["FoodCore"], swiftSettings: numericSettings),
        // Drawing, text from a committed glyph atlas, annotated photos and the HTML report.
        // The glyph atlas file as static data (C23 #embed: instant to compile, unlike a Swift byte-array literal).
        .target(name: "CGlyphAtlas", exclude: ["glyph-atlas.fmga"]),
        .target(name: "Rendering", dependencies: ["FoodCore", "CGlyphAtlas"], swiftSettings: numericSettings),
        // Optional stage 2: OpenAI-compatible, Gemini and Ollama providers over any HTTPTransport.
        .target(name: "LLMRefiner", dependencies: ["FoodCore"], swiftSettings: swiftSettings),
        // The meal diary store: SQLite (system libsqlite3) through GRDB.
        .target(
            name: "MealStore",
            dependencies: ["FoodCore", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        // Stage 2: the recogniser on FoodVision — labels, boxes, reference scale, one answer per food, grams.
        .target(name: "FoodRecognition", dependencies: ["FoodCore", "FoodVision"], swiftSettings: swiftSettings),
        // Developer tools only (training, fine-tuning, evaluation, decode benchmark): never imported by the library.
        .target(
            name: "FoodTraining",
            dependencies: ["FoodCore", "FoodVision", "FoodRecognition", "ImageCodecs", "Nutrition", "FoodMoment"],
            swiftSettings: numericSettings
        ),
        // Composition, and the library users import: decode → recognise → nutrition join → refinement merge, the
        // batch runner and pictures.
        .target(
            name: "FoodMoment",
            dependencies: ["FoodCore", "ImageCodecs", "FoodVision", "FoodRecognition", "Nutrition", "Rendering", "LLMRefiner"],
            swiftSettings: swiftSettings
        ),
        // Composition: the meal store as the batch's journal (FoodMoment's BatchJournal over MealStore).
        // The library as another package uses it: analyse photos, print foods and kcal (CI builds it from a clone by
        // URL and version too: tools/consumer/check).
        .executableTarget(name: "analyze-photo", dependencies: ["FoodMoment"], path: "Examples/AnalyzePhoto", swiftSettings: swiftSettings),
        .executableTarget(
            name: "foodmoment",
            dependencies: [
                "FoodMoment", "FoodRecognition", "FoodTraining", "FoodCore", "ImageCodecs", "FoodVision", "Nutrition", "Barcodes",
                "CurlTransport", "LLMRefiner", "MealStore", "CAllocator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Shared by the test targets: bad-input corpora, fixture paths, the shared-data locator, subprocess runs.
        .target(name: "FoodMomentTestSupport", dependencies: ["FoodCore", "ImageCodecs"], path: "Tests/Support", swiftSettings: swiftSettings),
        .testTarget(
            name: "ImageCodecsTests",
            dependencies: ["ImageCodecs", "FoodCore", "FoodVision", "FoodMomentTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "FoodVisionTests", dependencies: ["FoodVision", "FoodCore", "FoodMomentTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "NutritionTests", dependencies: ["Nutrition", "FoodCore", "CurlTransport", "FoodMomentTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "RenderingTests", dependencies: ["Rendering", "FoodCore"], swiftSettings: swiftSettings),
        .testTarget(name: "BarcodesTests", dependencies: ["Barcodes", "FoodCore", "ImageCodecs"], swiftSettings: swiftSettings),
        .testTarget(
            name: "FoodRecognitionTests",
            dependencies: ["FoodRecognition", "FoodTraining", "FoodMoment", "FoodCore", "FoodVision", "ImageCodecs", "Nutrition", "FoodMomentTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FoodTrainingTests",
            dependencies: ["FoodTraining", "FoodRecognition", "FoodCore", "FoodVision", "Nutrition", "FoodMomentTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FoodMomentTests",
            dependencies: ["FoodMoment", "FoodRecognition", "FoodCore", "FoodVision", "ImageCodecs", "Nutrition", "Rendering", "LLMRefiner", "FoodMomentTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "LLMRefinerTests", dependencies: ["LLMRefiner", "FoodCore", "CurlTransport", "FoodMomentTestSupport"], swiftSettings: swiftSettings),
        // Also GRDB: the atomicity tests install failing SQLite triggers through a second connection.
        .testTarget(
            name: "MealStoreTests",
            dependencies: ["MealStore", "FoodCore", "FoodMomentTestSupport", "foodmoment", .product(name: "GRDB", package: "GRDB.swift")],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BatchJournalTests",
            dependencies: ["FoodMoment", "FoodRecognition", "MealStore", "FoodCore", "Nutrition", "ImageCodecs", "FoodMomentTestSupport", "foodmoment"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CLITests", dependencies: ["FoodCore", "ImageCodecs", "FoodVision", "FoodMomentTestSupport", "foodmoment",
                                               .product(name: "ArgumentParser", package: "swift-argument-parser")],
                    exclude: ["Fixtures"], swiftSettings: swiftSettings),
    ]
)
