// swift-tools-version: 6.2
import PackageDescription

let codeSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Release binaries on Linux carry libstdc++ and libgcc inside as they do the Swift runtime, so where they run
/// they need only glibc and libcurl: scripts/release/static-link/libstdc++.so is a linker script naming the
/// static archive, found before the shared library; -static-libgcc takes libgcc_eh.a for libgcc_s.so.
let staticRuntime: [LinkerSetting] = [
    .unsafeFlags(
        ["-L", Context.packageDirectory + "/scripts/release/static-link", "-Xclang-linker", "-static-libgcc"],
        .when(platforms: [.linux], configuration: .release))
]

let package = Package(
    name: "fcmctl",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "fcmctl", targets: ["fcmctl"]),
        .executable(name: "fcm-emulator", targets: ["fcm-emulator"]),
        // What the release archive ships: both programs in one binary, chosen by the name it is run as.
        .executable(name: "fcmctl-multicall", targets: ["fcmctl-multicall"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Traits off: the emulator needs neither swift-configuration nor full Foundation extras.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.20.0", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    ],
    targets: [
        // No pkgConfig and no `link` in the module map: FCMManifest's linker settings choose how libyaml links.
        .systemLibrary(name: "CYAML", providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        // What `make` recorded about the build (commit, date, Swift version) behind a header that never changes.
        .target(name: "CBuildInfo"),
        .target(name: "CMallocArenas"),
        .target(name: "FCMBuildInfo", dependencies: ["CBuildInfo"], swiftSettings: codeSettings),
        .target(name: "FCMCore", swiftSettings: codeSettings),
        .target(
            // Crypto: a device file is hashed as it streams by, for the saved plan's manifest digest.
            name: "FCMManifest", dependencies: ["FCMCore", "CYAML", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: codeSettings,
            linkerSettings: [
                // Release binaries (make release, make dist) carry libyaml inside, from libyaml-dev's static
                // archive, so they need no libyaml where they run; `-l:FILE` names the exact file (GNU ld, gold,
                // lld). Debug builds and macOS link the shared library.
                .unsafeFlags(["-Xlinker", "-l:libyaml.a"], .when(platforms: [.linux], configuration: .release)),
                .linkedLibrary("yaml", .when(platforms: [.linux], configuration: .debug)),
                .linkedLibrary("yaml", .when(platforms: [.macOS])),
            ]),
        .target(
            name: "FCMClient",
            dependencies: [
                "FCMCore", "CCurl",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: codeSettings),
        .target(
            name: "FCMState", dependencies: ["FCMCore", .product(name: "Crypto", package: "swift-crypto")], swiftSettings: codeSettings),
        .target(name: "FCMReconcile", dependencies: ["FCMCore"], swiftSettings: codeSettings),
        // Renderers and the terminal: typed results in, bytes out.
        .target(name: "FCMViews", dependencies: ["FCMBuildInfo", "FCMCore", "FCMReconcile"], swiftSettings: codeSettings),
        // The use cases over values (plan, apply, drift, import, saved plans), in a `World`; nothing here prints.
        .target(
            name: "FCMEngine",
            dependencies: [
                "FCMCore", "FCMManifest", "FCMClient", "FCMReconcile", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: codeSettings),
        .target(
            name: "FCMCommands",
            dependencies: [
                "CMallocArenas", "FCMBuildInfo", "FCMCore", "FCMManifest", "FCMClient", "FCMState", "FCMReconcile", "FCMViews",
                "FCMEngine", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: codeSettings),
        .executableTarget(name: "fcmctl", dependencies: ["FCMCommands"], swiftSettings: codeSettings, linkerSettings: staticRuntime),
        // Fakes for tests: an in-memory FCM, and the in-memory state store (the state manager over a bucket in
        // memory, under the same rules as every store).
        .target(name: "FCMTestSupport", dependencies: ["FCMCore", "FCMState"], swiftSettings: codeSettings),
        .target(
            name: "FCMEmulator",
            dependencies: [
                "FCMBuildInfo",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: codeSettings),
        .executableTarget(
            name: "fcm-emulator", dependencies: ["FCMEmulator"], swiftSettings: codeSettings, linkerSettings: staticRuntime),
        // Writes the state an apply of a generated fleet leaves, for scripts/bench/ten_million.py; not shipped.
        .executableTarget(name: "fcm-bench-state", dependencies: ["FCMCore", "FCMState"], swiftSettings: codeSettings),
        .executableTarget(
            name: "fcmctl-multicall", dependencies: ["FCMCommands", "FCMEmulator"], swiftSettings: codeSettings,
            linkerSettings: staticRuntime),
        .testTarget(name: "FCMCoreTests", dependencies: ["FCMCore", "FCMTestSupport"], swiftSettings: codeSettings),
        .testTarget(name: "FCMClientTests", dependencies: ["FCMClient", "FCMCore"], swiftSettings: codeSettings),
        .testTarget(
            name: "FCMManifestTests", dependencies: ["FCMManifest", "FCMCore", "FCMTestSupport"], exclude: ["Fixtures"],
            swiftSettings: codeSettings),
        // FCMClient: the store conformance suite runs the gcs store through GCSObjectStorage against fake-gcs-server.
        .testTarget(
            name: "FCMStateTests", dependencies: ["FCMState", "FCMCore", "FCMClient", "FCMTestSupport"], swiftSettings: codeSettings),
        .testTarget(
            name: "FCMReconcileTests", dependencies: ["FCMReconcile", "FCMState", "FCMCore", "FCMTestSupport"], swiftSettings: codeSettings),
        .testTarget(name: "FCMEmulatorTests", dependencies: ["FCMEmulator"], swiftSettings: codeSettings),
        .testTarget(
            name: "FCMViewsTests", dependencies: ["FCMCommands", "FCMEngine", "FCMViews", "FCMReconcile", "FCMCore"], swiftSettings: codeSettings),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "FCMBuildInfo", "FCMCommands", "FCMClient", "FCMCore", "FCMEmulator", "FCMEngine", "FCMState", "FCMTestSupport", "FCMViews",
            ],
            swiftSettings: codeSettings),
    ]
)
