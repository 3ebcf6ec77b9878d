import CPango
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The fonts every measurement uses, pinned so that heights do not change with whatever else is
/// installed on the machine.
///
/// NotesKit never uses the system's fontconfig configuration. It builds its own from
/// ``configurationXML()``: exactly two font files, WenQuanYi Micro Hei (CJK, and the default
/// family) and DejaVu Sans (Latin), each the other's fallback, read from the Debian paths under
/// `/usr/share/fonts/truetype` (or under `$NOTESKIT_FONT_DIR`, same `wqy/` and `dejavu/`
/// subfolders). Text is measured at 72 dpi, so a size of 17 is 17 px (as 17 pt on iOS), and with
/// the Pango language pinned to ``language``, so the locale of the process does not matter either.
///
/// A missing font file is a `.font` error that names the Debian package to install.
public enum Fonts {
    /// The CJK family, also the default of every style.
    public static let cjkFamily = "WenQuanYi Micro Hei"
    /// The Latin family.
    public static let latinFamily = "DejaVu Sans"
    /// The families a style or `measureText` may name (compared without regard to case).
    public static let families = [cjkFamily, latinFamily]
    /// Dots per inch of every measurement: 72, so sizes are pixels.
    public static let dpi = 72.0
    /// The Pango language of every measurement (the apps' language).
    public static let language = "zh-cn"
    /// Where the font files are looked for when `NOTESKIT_FONT_DIR` is not set.
    public static let defaultDirectory = "/usr/share/fonts/truetype"

    struct Required {
        let family: String
        let relativePath: String
        let package: String
    }

    static let required = [
        Required(family: cjkFamily, relativePath: "wqy/wqy-microhei.ttc", package: "fonts-wqy-microhei"),
        Required(family: latinFamily, relativePath: "dejavu/DejaVuSans.ttf", package: "fonts-dejavu-core"),
    ]

    /// The folder the font files are read from: `$NOTESKIT_FONT_DIR`, or ``defaultDirectory``.
    public static var directory: String {
        if let value = getenv("NOTESKIT_FONT_DIR"), value.pointee != 0 {
            return String(cString: value)
        }
        return defaultDirectory
    }

    /// The canonical spelling of `family` if it is one of ``families``; a `.font` error otherwise.
    static func family(_ name: String) throws -> String {
        let lowered = name.lowercased()
        guard let found = families.first(where: { $0.lowercased() == lowered }) else {
            let shown = name.count > 60 ? String(name.prefix(60)) + "…" : name
            throw NotesError(.font, "font \"\(shown)\" is not available: NotesKit measures with its pinned fonts only (\(families.joined(separator: ", ")))", field: "font")
        }
        return found
    }

    /// The fontconfig configuration measuring uses, as XML: another program given it (for example
    /// through `FONTCONFIG_FILE`) sees exactly the fonts NotesKit sees.
    ///
    /// Throws `.font` naming the Debian package when a font file is missing.
    public static func configurationXML() throws -> String {
        let root = directory
        var dirs = "", accepted = ""
        for font in required {
            let path = root + "/" + font.relativePath
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                throw NotesError(.font, "the \(font.family) font is missing (\(path)); install it with `apt-get install \(font.package)` (then `fc-cache -f`)")
            }
            let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            dirs += "  <dir>\(xmlEscaped(folder))</dir>\n"
            accepted += "      <glob>\(xmlEscaped(path))</glob>\n"
        }
        return """
            <?xml version="1.0"?>
            <!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
            <!-- NotesKit's pinned fonts: exactly these files, nothing else installed on the machine. -->
            <fontconfig>
            \(dirs)  <cachedir>/var/cache/fontconfig</cachedir>
              <cachedir prefix="xdg">fontconfig</cachedir>
              <selectfont>
                <acceptfont>
            \(accepted)    </acceptfont>
                <rejectfont><glob>*</glob></rejectfont>
              </selectfont>
            </fontconfig>

            """
    }

    private static func xmlEscaped(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    // MARK: - The shared fontconfig configuration

    /// An `FcConfig *`, shared by every thread's font map (fontconfig is thread-safe; Pango font
    /// maps are not, so each thread has its own, see `TextMeasurer`).
    struct Config: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private static let shared = Mutex<Config?>(nil)

    /// The pinned configuration, built on first use (a few milliseconds) and kept for the life of
    /// the process. A failure is not remembered: installing the fonts and retrying works.
    static func config() throws -> Config {
        try shared.withLock { current in
            if let current { return current }
            let xml = try configurationXML()
            guard let config = FcConfigCreate() else { throw NotesError(.internalError, "fontconfig could not create a configuration") }
            let loaded = xml.withCString { FcConfigParseAndLoadFromMemory(config, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self), FcTrue) }
            guard loaded == FcTrue, FcConfigBuildFonts(config) == FcTrue else {
                FcConfigDestroy(config)
                throw NotesError(.font, "fontconfig refused NotesKit's font configuration (fonts under \(directory))")
            }
            let count = FcConfigGetFonts(config, FcSetSystem).map { Int($0.pointee.nfont) } ?? 0
            guard count >= required.count else {
                FcConfigDestroy(config)
                let packages = required.map(\.package).joined(separator: " ")
                throw NotesError(.font, "fontconfig found \(count) usable font(s) under \(directory), NotesKit needs \(required.count); reinstall them with `apt-get install --reinstall \(packages)`")
            }
            let made = Config(pointer: config)
            current = made
            return made
        }
    }
}
