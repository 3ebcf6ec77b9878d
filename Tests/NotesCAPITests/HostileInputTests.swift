import Testing
import NotesCAPI
import NotesKit
#if canImport(Glibc)
import Glibc
#endif

/// Calls the exports as a C caller would, with the inputs a careless or hostile one sends.
@Suite("The C ABI under hostile input")
struct HostileInputTests {
    func lastErrorKind() -> String {
        guard let p = nk_last_error() else { return "none" }
        defer { nk_free(p) }
        let json = String(cString: p)
        guard case let .string(kind)? = (try? JSONValue.parse(json))?["kind"] else { return json }
        return kind
    }

    func openMemory() throws -> OpaquePointer {
        var handle: OpaquePointer?
        #expect(nk_store_open_memory(&handle) == 0)
        return try #require(handle)
    }

    @Test("NULL pointers are invalid arguments")
    func nulls() throws {
        let store = try openMemory()
        defer { _ = nk_store_close(store) }
        var out: UnsafeMutablePointer<CChar>?
        #expect(nk_article_create(store, nil, "c", &out) == 1)
        #expect(nk_article_create(store, "t", "c", nil) == 1)
        #expect(nk_article_get(nil, 1, nil, 0, &out) == 1)
        #expect(nk_store_open(nil, 0, 0, nil) == 1)
        #expect(out == nil)
        #expect(lastErrorKind() == "invalid_argument")
    }

    @Test("invalid UTF-8 is refused and nothing is written")
    func invalidUTF8() throws {
        let store = try openMemory()
        defer { _ = nk_store_close(store) }
        let bad: [CChar] = [CChar(bitPattern: 0xFF), CChar(bitPattern: 0xFE), 0]
        var out: UnsafeMutablePointer<CChar>?
        #expect(bad.withUnsafeBufferPointer { nk_article_create(store, $0.baseAddress, "c", &out) } == 1)
        var count: Int64 = -1
        #expect(nk_article_select_count(store, Int64.min, Int64.min, &count) == 0 && count == 0)
    }

    @Test("closed, forged and wrong-kind handles are errors, not crashes")
    func handles() throws {
        let store = try openMemory()
        #expect(nk_store_close(store) == 0)
        #expect(nk_store_close(store) == 11)
        #expect(lastErrorKind() == "closed")
        var out: UnsafeMutablePointer<CChar>?
        #expect(nk_article_get(store, 1, nil, 0, &out) == 11)
        let forged = OpaquePointer(bitPattern: 0xDEAD_BEEF_0001)
        #expect(nk_article_get(forged, 1, nil, 0, &out) == 1)
        let wrongKind = OpaquePointer(bitPattern: UInt(bitPattern: store) + 1)
        #expect(nk_article_get(wrongKind, 1, nil, 0, &out) == 1)
    }

    @Test("a record is an owned packed row the caller frees: size, integers, text lengths, texts")
    func ownedResults() throws {
        let store = try openMemory()
        defer { _ = nk_store_close(store) }
        var out: UnsafeMutablePointer<CChar>?
        #expect(nk_article_create(store, "标题", "内容 \"quoted\"", &out) == 0)
        let row = UnsafeRawPointer(try #require(out))
        defer { nk_free(out) }
        let size = Int(row.loadUnaligned(as: Int64.self))
        let lengths = (5...7).map { Int(row.loadUnaligned(fromByteOffset: 8 * $0, as: Int64.self)) }
        #expect(size == 64 + lengths.reduce(0, +))
        let texts = UnsafeRawBufferPointer(start: row + 64, count: size - 64)
        let title = String(decoding: texts[lengths[0]..<(lengths[0] + lengths[1])], as: UTF8.self)
        let content = String(decoding: texts[(lengths[0] + lengths[1])...], as: UTF8.self)
        #expect(title == "标题" && content == "内容 \"quoted\"")
        #expect(row.loadUnaligned(fromByteOffset: 8, as: Int64.self) == 1)  // the id
    }
}
