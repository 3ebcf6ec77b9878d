/// The one error type of NotesKit.
///
/// A `NotesError` carries a ``Kind`` that callers pattern-match on, a message a person can act
/// on, and, where it applies, the field at fault or the SQLite result code behind it. The kinds
/// are exactly the Python exception classes under `noteskit.NotesError`; nothing else is public.
///
/// ```swift
/// do { try store.articles.create(title: "", content: "x") }
/// catch let error as NotesError where error.kind == .validation { print(error.field!) } // "title"
/// ```
public struct NotesError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, coarse enough to act on. The raw values are the C ABI status codes.
    public enum Kind: Int32, Sendable, CaseIterable {
        /// A caller broke the calling convention: NULL, invalid UTF-8, an unknown handle.
        case invalidArgument = 1
        /// A value breaks a rule of the model (empty title, limit out of range, forged cursor).
        case validation = 2
        /// The record asked for does not exist.
        case notFound = 3
        /// The record changed since it was read (a stale draft, an expected revision).
        case conflict = 4
        /// SQLite failed in a way not covered by a more precise kind.
        case storage = 5
        /// The store's schema is newer than this library, or the file is not a NotesKit store.
        case schema = 6
        /// The file is damaged or is not a database at all.
        case corrupt = 7
        /// The file or its folder cannot be written.
        case readOnly = 8
        /// The disk or the page limit is full.
        case storageFull = 9
        /// Another connection held a lock past the busy timeout.
        case busy = 10
        /// The store (or another handle) was closed.
        case closed = 11
        /// An import file or record is malformed.
        case format = 12
        /// A font needed for measuring text is missing.
        case font = 13
        /// The caller cancelled a long operation.
        case cancelled = 14
        /// A database server refused the credentials: wrong password, unknown role, not allowed in.
        case authentication = 15
        /// A database server cannot be reached (refused, unknown host, timed out) or went away.
        case unreachable = 16
        /// A bug in NotesKit: please report it.
        case internalError = 99

        /// The stable name used in the C ABI's last-error JSON.
        public var name: String {
            switch self {
            case .invalidArgument: "invalid_argument"
            case .validation: "validation"
            case .notFound: "not_found"
            case .conflict: "conflict"
            case .storage: "storage"
            case .schema: "schema"
            case .corrupt: "corrupt"
            case .readOnly: "read_only"
            case .storageFull: "storage_full"
            case .busy: "busy"
            case .closed: "closed"
            case .format: "format"
            case .font: "font"
            case .cancelled: "cancelled"
            case .authentication: "authentication"
            case .unreachable: "unreachable"
            case .internalError: "internal"
            }
        }
    }

    public var kind: Kind
    public var message: String
    /// The field at fault, for `.validation` and `.format`.
    public var field: String?
    /// The line or record number, for `.format`.
    public var line: Int?
    /// The file at fault, for `.format` errors of an import (inside a folder: the file in it).
    public var file: String?
    /// The SQLite extended result code, when SQLite reported the failure.
    public var sqliteCode: Int32?
    /// A stable, machine-readable name of this error (`title_empty`, `revision_conflict`, ...):
    /// finer than ``kind``, never translated, never reworded. Where no site names one it is
    /// `<field>_invalid` for a validation error with a field, else the kind's name.
    public var code: String
    /// The options of a call that ``message`` names, each written in it as ``Option/text``: a
    /// binding finds them there and words them for its callers (`read_only=True` in Python,
    /// `--format markdown` on the command line).
    public var options: [Option] = []

    public init(_ kind: Kind, _ message: String, field: String? = nil, line: Int? = nil, sqliteCode: Int32? = nil,
                file: String? = nil, code: String? = nil) {
        self.init(kind, Text(text: message), field: field, line: line, sqliteCode: sqliteCode, file: file, code: code)
    }

    /// An error whose message names options of the call: `"open it without \(option: "readOnly", true)"`.
    public init(_ kind: Kind, _ message: Text, field: String? = nil, line: Int? = nil, sqliteCode: Int32? = nil,
                file: String? = nil, code: String? = nil) {
        self.kind = kind
        self.message = message.text
        self.options = message.options
        self.field = field
        self.line = line
        self.sqliteCode = sqliteCode
        self.file = file
        self.code = code ?? (kind == .validation && field != nil ? "\(field!)_invalid" : kind.name)
    }

    public var description: String { "\(kind.name): \(message)" }

    static func validation(_ field: String, _ message: String, code: String? = nil) -> NotesError {
        NotesError(.validation, message, field: field, code: code)
    }

    /// An option of a call, named in a message in the core's own (Swift) words: `` `readOnly: true` ``,
    /// `` `format: .markdown` ``, `` `me: "Your Name"` ``, or just `` `format:` ``.
    public struct Option: Equatable, Sendable {
        public enum Value: Equatable, Sendable {
            /// One of the option's named values (a case of its enum).
            case choice(String)
            case string(String)
            case bool(Bool)
        }

        /// As the Swift API spells it (`readOnly`, `dateOrder`).
        public let name: String
        /// The value the message suggests; nil: the option itself.
        public let value: Value?

        /// How the message writes it.
        public var text: String {
            switch value {
            case nil: "`\(name):`"
            case let .choice(word)?: "`\(name): .\(word)`"
            case let .string(string)?: "`\(name): \"\(string)\"`"
            case let .bool(flag)?: "`\(name): \(flag)`"
            }
        }
    }

    /// A message that may name options of the call: `"pass \(option: "format", choice: "markdown")"`.
    public struct Text: ExpressibleByStringInterpolation, Sendable {
        public var text: String
        public var options: [Option] = []

        init(text: String) { self.text = text }
        public init(stringLiteral value: String) { text = value }
        public init(stringInterpolation: Interpolation) {
            text = stringInterpolation.text
            options = stringInterpolation.options
        }

        public struct Interpolation: StringInterpolationProtocol {
            var text = ""
            var options: [Option] = []
            public init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + 16 * interpolationCount) }
            public mutating func appendLiteral(_ literal: String) { text += literal }
            public mutating func appendInterpolation<T>(_ value: T) { text += String(describing: value) }
            public mutating func appendInterpolation(option name: String) { add(Option(name: name, value: nil)) }
            public mutating func appendInterpolation(option name: String, choice: String) { add(Option(name: name, value: .choice(choice))) }
            public mutating func appendInterpolation(option name: String, string: String) { add(Option(name: name, value: .string(string))) }
            public mutating func appendInterpolation(option name: String, _ flag: Bool) { add(Option(name: name, value: .bool(flag))) }
            mutating func add(_ option: Option) {
                text += option.text
                if !options.contains(option) { options.append(option) }
            }
        }
    }

    /// The apps' own wording of an error, by ``code`` and language (BCP 47 tag). Only what the
    /// notes app said itself (its save HUDs); English, ``message``, is the default.
    public static let wording: [String: [String: String]] = [
        "title_empty": ["zh-Hans": "标题不可为空"],
        "content_empty": ["zh-Hans": "内容不可为空"],
    ]

    /// The message in `language` where the apps had a wording for this error, else ``message``.
    /// A tag matches by its most specific known form: `zh-Hans-CN`, `zh-CN`, `zh-SG` and `zh` read
    /// as `zh-Hans`; `en` (or any other) gives ``message``.
    public func message(in language: String) -> String {
        guard let texts = NotesError.wording[code] else { return message }
        return NotesError.language(language).flatMap { texts[$0] } ?? message
    }

    /// The wordings of this error, by language (empty when the apps had none).
    public var messages: [String: String] { NotesError.wording[code] ?? [:] }

    static func language(_ tag: String) -> String? {
        let parts = tag.lowercased().split { $0 == "-" || $0 == "_" }.map(String.init)
        guard parts.first == "zh" else { return nil }
        if parts.contains("hant") || parts.contains("tw") || parts.contains("hk") || parts.contains("mo") { return nil }
        return "zh-Hans"
    }

    /// `value` as it appears inside a message: at most `limit` characters, the rest elided, so an
    /// error never echoes a caller's 100 MB argument back.
    public static func shown(_ value: String, limit: Int = 200) -> String {
        guard value.utf8.count > limit else { return value }
        return String(value.prefix(limit)) + "… (\(value.utf8.count) bytes)"
    }

    static func notFound(_ what: String, _ id: Int64) -> NotesError {
        NotesError(.notFound, "\(what) \(id) does not exist", code: "\(what)_not_found")
    }
}
