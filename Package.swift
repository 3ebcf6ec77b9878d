// swift-tools-version:6.0
import PackageDescription

// The shipped library is built with
//   swift build -c release --product NotesCAPI -Xswiftc -static-stdlib
// Keep -static-stdlib out of this file: with it `swift test` fails to link.
let package = Package(
    name: "NotesKit",
    products: [
        .library(name: "NotesKit", targets: ["NotesKit"]),
        .library(name: "NotesCAPI", type: .dynamic, targets: ["NotesCAPI"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CPango",
            pkgConfig: "pangoft2",
            providers: [.apt(["libpango1.0-dev", "libcairo2-dev"])]
        ),
        // The Arrow C Data / C Stream Interface structs (header only).
        .systemLibrary(name: "CArrow"),
        .systemLibrary(
            name: "CPython",
            pkgConfig: "python3-embed",
            providers: [.apt(["libpython3-dev"])]
        ),
        .target(
            name: "NotesKit",
            dependencies: ["CSQLite", "CPango"]
        ),
        .target(
            name: "NotesCAPI",
            dependencies: ["NotesKit", "CArrow"]
        ),
        .testTarget(
            name: "NotesKitTests",
            dependencies: ["NotesKit"]
        ),
        .testTarget(
            name: "NotesCAPITests",
            dependencies: ["NotesCAPI", "NotesKit"]
        ),
        .testTarget(
            name: "NotesHarnessTests",
            dependencies: ["CPython", "NotesCAPI"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
