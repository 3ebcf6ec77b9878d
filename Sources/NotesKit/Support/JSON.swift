/// A parsed JSON value, and a small, strict parser and writer for it.
///
/// NotesKit carries records as UTF-8 JSON across the C ABI and in its exchange formats. The parser
/// follows RFC 8259 (no comments, no trailing commas, no NaN), keeps object keys in order, and
/// reports the line and column of the first error. Numbers without a fraction or exponent that fit
/// in an `Int64` stay integers.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The value of `key` in an object (the first one, if repeated); nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// A short name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON syntax error with its position (1-based line and column).
public struct JSONSyntaxError: Error, Sendable {
    public var message: String
    public var line: Int
    public var column: Int
}

extension JSONValue {
    /// Parses one JSON document; anything but white space after it is an error.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            var parser = JSONParser(buffer)
            return try parser.parseDocument()
        }
    }

    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

struct JSONParser {
    /// The bytes being parsed; the caller keeps them alive for the parser's lifetime.
    let b: UnsafeBufferPointer<UInt8>
    var i = 0
    var depth = 0
    static let maxDepth = 512

    init(_ bytes: UnsafeBufferPointer<UInt8>) { b = bytes }

    func fail(_ message: String) -> JSONSyntaxError {
        var line = 1, column = 1
        for k in 0..<min(i, b.count) {
            if b[k] == 10 { line += 1; column = 1 } else if b[k] & 0xC0 != 0x80 { column += 1 }
        }
        return JSONSyntaxError(message: message, line: line, column: column)
    }

    mutating func skipSpace() {
        while i < b.count, b[i] == 32 || b[i] == 10 || b[i] == 13 || b[i] == 9 { i += 1 }
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        let v = try parseValue()
        skipSpace()
        guard i == b.count else { throw fail("unexpected text after the JSON value") }
        return v
    }

    mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        skipSpace()
        guard i < b.count else { throw fail("unexpected end of JSON") }
        switch b[i] {
        case 123: return try parseObject()
        case 91: return try parseArray()
        case 34: return .string(try parseString())
        case 116: try literal("true"); return .bool(true)
        case 102: try literal("false"); return .bool(false)
        case 110: try literal("null"); return .null
        case 45, 48...57: return try parseNumber()
        default: throw fail("unexpected character in JSON")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { throw fail("unexpected end of JSON") }
        for k in 0..<n where b[i + k] != word.utf8Start[k] { throw fail("invalid literal in JSON") }
        i += n
    }

    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maxDepth { throw fail("JSON nested deeper than \(Self.maxDepth) levels") }
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        i += 1
        var members: [(String, JSONValue)] = []
        skipSpace()
        if i < b.count, b[i] == 125 { i += 1; depth -= 1; return .object(members) }
        while true {
            skipSpace()
            guard i < b.count, b[i] == 34 else { throw fail("expected a string key in JSON object") }
            let key = try parseString()
            skipSpace()
            guard i < b.count, b[i] == 58 else { throw fail("expected ':' in JSON object") }
            i += 1
            members.append((key, try parseValue()))
            if try closes(125, else: "expected ',' or '}' in JSON object") { return .object(members) }
        }
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        i += 1
        var items: [JSONValue] = []
        skipSpace()
        if i < b.count, b[i] == 93 { i += 1; depth -= 1; return .array(items) }
        while true {
            items.append(try parseValue())
            if try closes(93, else: "expected ',' or ']' in JSON array") { return .array(items) }
        }
    }

    /// After a member or an element: a ',' (consumed) is false, another follows; the container's
    /// `close` byte (consumed, leaving the container) is true; anything else fails with `message`.
    @inline(__always)
    private mutating func closes(_ close: UInt8, else message: String) throws(JSONSyntaxError) -> Bool {
        skipSpace()
        guard i < b.count else { throw fail("unexpected end of JSON") }
        if b[i] == 44 { i += 1; return false }
        if b[i] == close { i += 1; depth -= 1; return true }
        throw fail(message)
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = i
        if b[i] == 45 { i += 1 }
        guard i < b.count, (48...57).contains(b[i]) else { throw fail("invalid number in JSON") }
        if b[i] == 48 { i += 1 } else { while i < b.count, (48...57).contains(b[i]) { i += 1 } }
        var integral = true
        if i < b.count, b[i] == 46 {
            integral = false
            i += 1
            guard i < b.count, (48...57).contains(b[i]) else { throw fail("invalid number in JSON") }
            while i < b.count, (48...57).contains(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == 101 || b[i] == 69 {
            integral = false
            i += 1
            if i < b.count, b[i] == 43 || b[i] == 45 { i += 1 }
            guard i < b.count, (48...57).contains(b[i]) else { throw fail("invalid number in JSON") }
            while i < b.count, (48...57).contains(b[i]) { i += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
        if integral, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw fail("number out of range in JSON") }
        return .double(d)
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard i + 4 <= b.count else { throw fail("unexpected end of JSON") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 97...102: d = UInt32(c - 87)
            case 65...70: d = UInt32(c - 55)
            default: throw fail("invalid \\u escape in JSON string")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < b.count, b[i] != 34, b[i] != 92, b[i] >= 0x20 { i += 1 }
        guard i < b.count else { throw fail("unterminated JSON string") }
        if b[i] == 34 {
            let s = try validated(UnsafeBufferPointer(rebasing: b[start..<i]))
            i += 1
            return s
        }
        var out = Array(UnsafeBufferPointer(rebasing: b[start..<i]))
        while true {
            guard i < b.count else { throw fail("unterminated JSON string") }
            let c = b[i]
            if c == 34 { i += 1; break }
            if c < 0x20 { throw fail("control character in JSON string") }
            if c != 92 { out.append(c); i += 1; continue }
            i += 1
            guard i < b.count else { throw fail("unterminated JSON string") }
            let e = b[i]
            i += 1
            switch e {
            case 34: out.append(34)
            case 92: out.append(92)
            case 47: out.append(47)
            case 98: out.append(8)
            case 102: out.append(12)
            case 110: out.append(10)
            case 114: out.append(13)
            case 116: out.append(9)
            case 117:
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 6 <= b.count, b[i] == 92, b[i + 1] == 117 else { throw fail("unpaired surrogate in JSON string") }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in JSON string") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("unpaired surrogate in JSON string")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape in JSON string") }
                var encoded = ""
                encoded.unicodeScalars.append(u)
                out.append(contentsOf: encoded.utf8)
            default:
                throw fail("invalid escape in JSON string")
            }
        }
        return try out.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in try validated(buffer) }
    }

    func validated(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> String {
        guard let s = String.validatingUTF8(bytes) else { throw fail("invalid UTF-8 in JSON string") }
        return s
    }
}

/// Appends JSON text to a byte buffer. Strings are escaped per RFC 8259; non-ASCII stays UTF-8.
public struct JSONWriter {
    public var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public mutating func raw(_ s: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    public mutating func string(_ s: String) {
        bytes.append(34)
        var s = s
        s.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            let n = utf8.count
            var runStart = 0
            var k = 0
            while k < n {
                // Skip 8 bytes at a time while none needs escaping (SWAR: no byte < 0x20, '"' or '\\').
                if k + 8 <= n {
                    let w = UnsafeRawPointer(base + k).loadUnaligned(as: UInt64.self)
                    if !Self.needsEscape(w) {
                        k += 8
                        continue
                    }
                }
                let c = base[k]
                if c < 0x20 || c == 34 || c == 92 {
                    bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: k - runStart))
                    escape(c)
                    runStart = k + 1
                }
                k += 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: n - runStart))
        }
        bytes.append(34)
    }

    @inline(__always)
    static func needsEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        let below20 = (w &- ones &* 0x20) & ~w & highs != 0
        return below20 || hasZero(w ^ (ones &* 34)) || hasZero(w ^ (ones &* 92))
    }

    private mutating func escape(_ c: UInt8) {
        switch c {
        case 34: bytes.append(92); bytes.append(34)
        case 92: bytes.append(92); bytes.append(92)
        case 10: bytes.append(92); bytes.append(110)
        case 13: bytes.append(92); bytes.append(114)
        case 9: bytes.append(92); bytes.append(116)
        default:
            let hex: StaticString = "0123456789abcdef"
            bytes.append(contentsOf: [92, 117, 48, 48, hex.utf8Start[Int(c >> 4)], hex.utf8Start[Int(c & 15)]])
        }
    }

    /// Writes a timestamp as a quoted ISO-8601 string, without building a `String`.
    public mutating func timestamp(_ t: Timestamp) {
        bytes.append(34)
        t.writeISO8601(into: &bytes)
        bytes.append(34)
    }

    public mutating func int(_ v: Int64) {
        // Digits straight into the buffer: no String per number (spans can hold thousands).
        var magnitude = v.magnitude
        if v < 0 { bytes.append(45) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0) // room for 20 digits, written backwards
        let count = withUnsafeMutableBytes(of: &digits) { buffer -> Int in
            var n = 0
            repeat {
                buffer[23 - n] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            return n
        }
        withUnsafeBytes(of: &digits) { bytes.append(contentsOf: $0[(24 - count)...]) }
    }
    public mutating func double(_ v: Double) { bytes.append(contentsOf: (v.isFinite ? String(v) : "null").utf8) }
    public mutating func bool(_ v: Bool) { v ? raw("true") : raw("false") }
    public mutating func null() { raw("null") }

    /// Writes `"key":` (the caller writes the separating commas).
    public mutating func key(_ k: StaticString) {
        bytes.append(34)
        raw(k)
        bytes.append(34)
        bytes.append(58)
    }

    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case let .bool(x): bool(x)
        case let .int(x): int(x)
        case let .double(x): double(x)
        case let .string(x): string(x)
        case let .array(items):
            bytes.append(91)
            for (n, item) in items.enumerated() {
                if n > 0 { bytes.append(44) }
                value(item)
            }
            bytes.append(93)
        case let .object(members):
            bytes.append(123)
            for (n, (k, item)) in members.enumerated() {
                if n > 0 { bytes.append(44) }
                string(k)
                bytes.append(58)
                value(item)
            }
            bytes.append(125)
        }
    }
}

// MARK: - Reading objects

/// The members of one JSON object, read with errors that name the field: the one reader of every
/// JSON object NotesKit takes in (a call's options, a layout style, an interaction model's state,
/// a record of an exchange file). `kind` is what a wrong or missing value is: `.validation` for a
/// call's arguments, `.format` for a file's records.
public struct JSONObject: Sendable {
    public let members: [(String, JSONValue)]
    public let kind: NotesError.Kind

    public init(members: [(String, JSONValue)] = [], kind: NotesError.Kind) {
        self.members = members
        self.kind = kind
    }

    /// `value` as an object; any other value is a `kind` error naming what it should have been.
    public init(_ value: JSONValue, kind: NotesError.Kind, what: String = "value") throws {
        guard case let .object(members) = value else {
            throw NotesError(kind, "a \(what) must be a JSON object, got \(value.typeName)")
        }
        self.init(members: members, kind: kind)
    }

    /// The object in `text`, a call's argument called `name`: malformed JSON, or a value that is
    /// not an object, is an invalid argument. Values in it are then checked as `kind`.
    public static func parse(argument text: String, _ name: String, kind: NotesError.Kind = .validation) throws -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw NotesError(.invalidArgument, "\(name) is not valid JSON: \(error.message) at line \(error.line), column \(error.column)",
                             field: name)
        }
        guard case let .object(members) = value else { throw NotesError(.invalidArgument, "\(name) must be a JSON object", field: name) }
        return JSONObject(members: members, kind: kind)
    }

    public func fail(_ field: String?, _ message: String) -> NotesError {
        NotesError(kind, message, field: field)
    }

    /// Refuses a member not in `allowed` (a misspelt one would otherwise be ignored silently) and a
    /// member given twice. `what` names the members in the message ("field", "option").
    public func only(_ allowed: [String], what: String = "field") throws {
        for (index, member) in members.enumerated() {
            guard allowed.contains(member.0) else {
                throw fail(member.0, "unknown \(what) \"\(member.0.prefix(60))\" (expected \(allowed.joined(separator: ", ")))")
            }
            if members[..<index].contains(where: { $0.0 == member.0 }) {
                throw fail(member.0, "\(what) \"\(member.0)\" is given twice")
            }
        }
    }

    public func value(_ field: String) -> JSONValue? {
        members.first { $0.0 == field }?.1
    }

    private func missing(_ field: String) -> NotesError { fail(field, "\(field) is missing") }

    /// A member that must be there (and not null).
    private func required<T>(_ field: String, _ read: (String) throws -> T?) throws -> T {
        guard let v = try read(field) else { throw missing(field) }
        return v
    }

    /// A member that may be missing or null (nil), else `what` as `cast` reads it.
    private func optional<T>(_ field: String, _ what: String, _ cast: (JSONValue) -> T?) throws -> T? {
        guard let v = value(field) else { return nil }
        if case .null = v { return nil }
        guard let x = cast(v) else { throw fail(field, "\(field) must be \(what), got \(v.typeName)") }
        return x
    }

    public func string(_ field: String) throws -> String { try required(field, optionalString) }

    public func optionalString(_ field: String) throws -> String? {
        try optional(field, "a string") { if case let .string(s) = $0 { s } else { nil } }
    }

    public func optionalInt(_ field: String) throws -> Int64? {
        try optional(field, "a whole number") { if case let .int(v) = $0 { v } else { nil } }
    }

    public func number(_ field: String) throws -> Double { try required(field, optionalNumber) }

    /// A number that may be null on purpose: `absent` when the field is missing, nil when it is null.
    public func nullableNumber(_ field: String, absent: Double?) throws -> Double? {
        if value(field) == nil { return absent }
        return try optionalNumber(field)
    }

    public func optionalNumber(_ field: String) throws -> Double? {
        try optional(field, "a number") {
            switch $0 {
            case let .int(i): Double(i)
            case let .double(d): d
            default: nil
            }
        }
    }

    public func bool(_ field: String) throws -> Bool { try required(field, optionalBool) }

    public func optionalBool(_ field: String) throws -> Bool? {
        try optional(field, "true or false") { if case let .bool(b) = $0 { b } else { nil } }
    }
}
