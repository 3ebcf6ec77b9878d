import CPango
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The fonts every measurement uses, pinned so that heights do not change with whatever else is
/// installed on the machine.
///
/// NotesKit never uses the system's fontconfig configuration, nor reads `/etc/fonts`: it builds its
/// own in code (``config()``): exactly two font files, WenQuanYi Micro Hei (CJK, and the default
/// family) and DejaVu Sans (Latin), each the other's fallback, added with `FcConfigAppFontAddFile`
/// from ``directory`` (`$NOTESKIT_FONT_DIR`, else the `fonts` folder the wheel installs beside the
/// library, else the Debian paths under `/usr/share/fonts/truetype`; always the same `wqy/` and
/// `dejavu/` subfolders), with fontconfig's cache in ``cacheDirectory`` (created owner-only). Text is
/// measured at 72 dpi, so a size of 17 is 17 px (as 17 pt on iOS), and with the Pango language
/// pinned to ``language``, so the locale of the process does not matter either.
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

    /// The folder the font files are read from: `$NOTESKIT_FONT_DIR`, else the `fonts` folder
    /// beside the loaded library (the wheel's copy), else ``defaultDirectory``.
    public static var directory: String {
        if let value = getenv("NOTESKIT_FONT_DIR"), value.pointee != 0 {
            return String(cString: value)
        }
        return packagedDirectory ?? defaultDirectory
    }

    /// `fonts` beside the shared object NotesKit is linked into, if there is such a folder.
    static let packagedDirectory: String? = {
        var info = cpango_dl_info()
        guard cpango_dladdr(#dsohandle, &info) != 0, let name = info.dli_fname else { return nil }
        let library = String(cString: name)
        guard let slash = library.lastIndex(of: "/") else { return nil }
        let folder = String(library[..<slash]) + "/fonts"
        var status = stat()
        guard stat(folder, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return folder
    }()

    /// The font files measuring uses, in ``families`` order; `.font` naming the Debian package when
    /// one is missing.
    public static func files() throws -> [String] {
        let root = directory
        return try required.map { font in
            let path = root + "/" + font.relativePath
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                throw NotesError(.font, "the \(font.family) font is missing (\(path)); install it with `apt-get install \(font.package)`, or reinstall noteskit, whose wheel carries it")
            }
            return path
        }
    }

    /// Where fontconfig may keep its cache: `noteskit/fontconfig` under `$XDG_CACHE_HOME`, else
    /// under `~/.cache` (`$HOME`, else the user's home in the password database), made owner-only
    /// (0700) when NotesKit creates it. Nil when there is no such folder and it cannot be made:
    /// measuring works without a cache.
    public static var cacheDirectory: String? {
        func variable(_ name: String) -> String? {
            guard let value = getenv(name), value.pointee == 0x2F else { return nil }  // absolute paths only
            return String(cString: value)
        }
        var base = variable("XDG_CACHE_HOME")
        if base == nil {
            var home = variable("HOME")
            if home == nil, let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir, dir.pointee == 0x2F {
                home = String(cString: dir)
            }
            base = home.map { $0 + "/.cache" }
        }
        guard let base else { return nil }
        var path = base
        for part in ["", "/noteskit", "/fontconfig"] {
            path = part.isEmpty ? base : path + part
            var info = stat()
            if stat(path, &info) == 0 {
                guard (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
                continue
            }
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else { return nil }
            chmod(path, 0o700)
        }
        return path
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

    /// The fontconfig configuration measuring uses, written as XML for other programs: given it
    /// (for example through `FONTCONFIG_FILE`), they see exactly the fonts NotesKit sees. NotesKit
    /// itself builds the same configuration in code (``config()``) and reads no file.
    ///
    /// Throws `.font` naming the Debian package when a font file is missing.
    public static func configurationXML() throws -> String {
        var dirs = "", accepted = ""
        for path in try files() {
            let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            dirs += "  <dir>\(xmlEscaped(folder))</dir>\n"
            accepted += "      <glob>\(xmlEscaped(path))</glob>\n"
        }
        let cache = cacheDirectory.map { "  <cachedir>\(xmlEscaped($0))</cachedir>\n" } ?? ""
        return """
            <?xml version="1.0"?>
            <!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
            <!-- NotesKit's pinned fonts: exactly these files, nothing else installed on the machine. -->
            <fontconfig>
            \(dirs)\(cache)  <selectfont>
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
    ///
    /// Why the unchecked `Sendable` is safe: it is a C handle the compiler cannot follow. The
    /// configuration is complete (fonts added and built) before `config()` publishes it under
    /// `shared`'s lock, is never changed or destroyed after, and fontconfig guards its own state
    /// (reference counts are atomic, lookups lock), so any thread may hand it to its own font map.
    /// Exercised from many threads by `LayoutTests` ("measuring on many threads at once") and
    /// `ConcurrencyTests` (a layout and a prefetch on several threads).
    struct Config: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private static let shared = Mutex<Config?>(nil)

    /// The pinned configuration, built on first use (a few milliseconds) and kept for the life of
    /// the process. A failure is not remembered: installing the fonts and retrying works.
    ///
    /// It is made fontconfig's current configuration too: Pango 1.50 calls `FcInit()` in a
    /// background thread when its first font map is made, which would otherwise load the system's
    /// configuration (`/etc/fonts`, or `$FONTCONFIG_FILE`) and scan every installed font.
    static func config() throws -> Config {
        try shared.withLock { current in
            if let current { return current }
            let files = try files()
            guard let config = FcConfigCreate() else { throw NotesError(.internalError, "fontconfig could not create a configuration") }
            if let cache = cacheDirectory {
                let xml = "<fontconfig><cachedir>\(xmlEscaped(cache))</cachedir></fontconfig>"
                _ = xml.withCString { FcConfigParseAndLoadFromMemory(config, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self), FcTrue) }
            }
            guard FcConfigBuildFonts(config) == FcTrue else {
                FcConfigDestroy(config)
                throw NotesError(.internalError, "fontconfig could not build a configuration")
            }
            for file in files {
                let added = file.withCString { FcConfigAppFontAddFile(config, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self)) }
                guard added == FcTrue else {
                    FcConfigDestroy(config)
                    throw NotesError(.font, "fontconfig cannot read the font file \(file); reinstall it with `apt-get install --reinstall \(required.map(\.package).joined(separator: " "))`, or reinstall noteskit")
                }
            }
            let count = FcConfigGetFonts(config, FcSetApplication).map { Int($0.pointee.nfont) } ?? 0
            guard count >= required.count else {
                FcConfigDestroy(config)
                throw NotesError(.font, "fontconfig found \(count) usable font(s) in \(files.joined(separator: ", ")), NotesKit needs \(required.count)")
            }
            FcConfigSetCurrent(config)
            let made = Config(pointer: config)
            current = made
            return made
        }
    }
}
