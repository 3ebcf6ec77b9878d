import CArrow
import Glibc
import Testing
import NotesCAPI
import NotesKit

/// The Arrow structs the library hands out, handled as a careless C consumer might.
@Suite("Arrow exports", .serialized)
struct ArrowExportTests {
    func outstanding() -> Int64 {
        var n: Int64 = -1
        _ = nk_arrow_outstanding(&n)
        return n
    }

    func memoryStore() throws -> OpaquePointer {
        var handle: OpaquePointer?
        #expect(nk_store_open_memory(&handle) == 0)
        return try #require(handle)
    }

    @Test("a page is a struct batch with its schema; releasing both gives every struct back, a second release does nothing")
    func page() throws {
        let store = try memoryStore()
        defer { _ = nk_store_close(store) }
        var row: UnsafeMutablePointer<CChar>?
        for title in ["a", "b", "c"] {
            #expect(nk_article_create(store, title, "content", &row) == 0)
            nk_free(row)
        }
        let before = outstanding()
        var array = ArrowArray(), schema = ArrowSchema()
        var cursor: UnsafeMutablePointer<CChar>?
        #expect(nk_article_list(store, 2, nil, Int64.min, Int64.min, 0, &array, &schema, &cursor) == 0)
        #expect(array.length == 2 && array.n_children == 7 && schema.n_children == 7)
        #expect(String(cString: schema.format) == "+s")
        #expect(String(cString: schema.children[4]!.pointee.format) == "tsm:UTC")
        #expect(cursor != nil)
        nk_free(cursor)
        #expect(outstanding() > before)
        let release = array.release
        array.release(&array)
        schema.release(&schema)
        #expect(array.release == nil && schema.release == nil && outstanding() == before)
        release?(&array)  // a stale copy of the callback on a released struct: nothing happens
        #expect(outstanding() == before)
    }

    @Test("a stream released early, never read, or read after release is cleanly refused")
    func streams() throws {
        let store = try memoryStore()
        defer { _ = nk_store_close(store) }
        let before = outstanding()
        var stream = ArrowArrayStream()
        #expect(nk_article_select(store, Int64.min, Int64.min, 0, 1, nil) == 1)
        #expect(nk_article_select(store, Int64.min, Int64.min, 0, 3, &stream) == 1)
        #expect(nk_article_select(store, Int64.min, Int64.min, 0, 1, &stream) == 0)
        stream.release(&stream)  // never read
        #expect(outstanding() == before)
        var array = ArrowArray()
        #expect(stream.get_next(&stream, &array) == EINVAL)  // released (its callbacks kept): refused
        var schema = ArrowSchema()
        #expect(stream.get_schema(&stream, &schema) == EINVAL && schema.release == nil)
        #expect(nk_article_select(store, Int64.min, Int64.min, 0, 1, &stream) == 0)
        #expect(stream.get_next(&stream, nil) == EINVAL)
        #expect(stream.get_last_error(&stream) != nil)
        #expect(stream.get_next(&stream, &array) == 0 && array.release == nil)  // empty store: the end at once
        stream.release(&stream)
        #expect(outstanding() == before)
    }
}
