import Testing
@testable import NotesKit

@Suite("Timestamps, UIDs and JSON")
struct SupportTests {
    @Test("the statement cache hands every text its own statement, however many are used in turn")
    func statementCache() throws {
        let store = try Store.memory()
        defer { store.close() }
        // More texts than the cache keeps as recent, sharing prefixes; each asked for in turn, out
        // of turn, and as an equal text in other storage (the same statement).
        let texts = (1...(Connection.recentCount * 2 + 3)).map { "SELECT \($0 * 10), 'x'" } + ["SELECT 1", "SELECT 10"]
        try store.read { db in
            var first: [String: Statement] = [:]
            for round in 0..<3 {
                for (k, text) in (round == 1 ? texts.reversed() : texts).enumerated() {
                    let sql = round == 2 ? String(text.utf8.map { Character(Unicode.Scalar($0)) }) : text
                    let stmt = try db.prepare(sql)
                    #expect(try stmt.step(), "\(sql) (round \(round), \(k))")
                    #expect(stmt.int64(0) == Int64(text.dropFirst(7).prefix { $0.isNumber })!)
                    if let seen = first[text] { #expect(seen === stmt) } else { first[text] = stmt }
                    stmt.reset()
                }
            }
            db.finishStatements()
        }
    }

    @Test("UTF-8 code points are counted as Swift counts scalars, at every length and with broken sequences")
    func codePointCount() {
        let texts = ["", "a", "héllo wörld", "今天天气真好 The weather", "🦄🦖 mixed ASCII and emoji 😀", String(repeating: "é字", count: 9)]
        for text in texts {
            let bytes = Array(text.utf8)
            for length in 0...bytes.count {  // every prefix: each length modulo 8, sequences cut short
                let prefix = Array(bytes[..<length])
                let expected = prefix.filter { $0 & 0xC0 != 0x80 }.count
                #expect(prefix.withUnsafeBufferPointer { UTF8.codePoints(in: $0) } == expected, "\(text) [..<\(length)]")
            }
            #expect(bytes.withUnsafeBufferPointer { UTF8.codePoints(in: $0) } == text.unicodeScalars.count)
        }
        #expect(UTF8.codePoints(in: UnsafeBufferPointer(start: nil, count: 0)) == 0)
        // Longer than 255 blocks of 16 bytes, the most a byte lane counts before it is summed:
        // continuation bytes only (every lane full), and text.
        for bytes in [[UInt8](repeating: 0x80, count: 255 * 16 * 2 + 23), Array(String(repeating: "字é a", count: 1_500).utf8)] {
            #expect(bytes.withUnsafeBufferPointer { UTF8.codePoints(in: $0) } == bytes.filter { $0 & 0xC0 != 0x80 }.count)
        }
    }

    @Test("ISO-8601 text round-trips to the millisecond", arguments: [
        "1970-01-01T00:00:00.000Z", "2026-11-29T15:28:06.123Z", "0001-01-01T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z", "2000-02-29T12:00:00.001Z", "1969-12-31T23:59:59.999Z",
    ])
    func isoRoundTrip(text: String) throws {
        let t = try #require(Timestamp(iso8601: text))
        #expect(t.iso8601 == text)
    }

    @Test("offsets, fractions and spaces are understood")
    func isoVariants() {
        #expect(Timestamp(iso8601: "2026-11-29T16:28:06+01:00")?.iso8601 == "2026-11-29T15:28:06.000Z")
        #expect(Timestamp(iso8601: "2026-11-29 15:28:06.123456Z")?.iso8601 == "2026-11-29T15:28:06.123Z")
        #expect(Timestamp(iso8601: "2026-11-29T15:28:06.1Z")?.milliseconds == Timestamp(iso8601: "2026-11-29T15:28:06.100Z")?.milliseconds)
    }

    @Test("any stored integer is written as valid ISO-8601, out-of-range ones clamped", arguments: [
        (Int64.min, "0001-01-01T00:00:00.000Z"), (Int64.max, "9999-12-31T23:59:59.999Z"),
        (-62_135_596_800_001, "0001-01-01T00:00:00.000Z"), (253_402_300_800_000, "9999-12-31T23:59:59.999Z"),
        (-1, "1969-12-31T23:59:59.999Z"), (0, "1970-01-01T00:00:00.000Z"),
    ])
    func outOfRangeTimestamps(milliseconds: Int64, text: String) {
        #expect(Timestamp(milliseconds: milliseconds).iso8601 == text)
    }

    @Test("malformed times are refused", arguments: [
        "", "2026-11-29", "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-29T24:00:00Z",
        "2026-11-29T15:28:06", "2026-11-29T15:28:06.Z", "yesterday", "2026-11-29T15:28:06Zjunk",
    ])
    func isoRejects(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }

    @Test("random uids are version-4 UUIDs and normalise to lower case")
    func uids() throws {
        let uid = UID.random()
        #expect(uid.count == 36 && Array(uid)[14] == "4")
        #expect(try UID.normalized(uid.uppercased()) == uid)
        #expect(throws: NotesError.self) { try UID.normalized("not-a-uuid") }
    }

    @Test("JSON parses what it writes, escapes included")
    func jsonRoundTrip() throws {
        let value = JSONValue.object([("a", .string("quote \" backslash \\ newline \n tab \t nul \u{0} 字 😀")),
                                      ("b", .array([.int(-5), .double(1.5), .bool(true), .null]))])
        var w = JSONWriter()
        w.value(value)
        #expect(try JSONValue.parse(w.bytes) == value)
    }

    @Test("malformed JSON is reported with its line", arguments: ["{", "[1,]", "{\"a\" 1}", "\"\\ud800\"", "01", "[1]x", "\n\n  nope"])
    func jsonRejects(text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(text) }
    }

    @Test("deep nesting is an error, not a stack overflow")
    func jsonDepth() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(String(repeating: "[", count: 100_000)) }
    }
}
