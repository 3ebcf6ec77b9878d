import CArrow
import Testing
import NotesCAPI
import NotesKit

/// The chat exports under hostile input, called as a C caller would.
@Suite("Chat through the C ABI")
struct ChatABITests {
    func lastErrorKind() -> String {
        guard let p = nk_last_error() else { return "none" }
        defer { nk_free(p) }
        guard case let .string(kind)? = (try? JSONValue.parse(String(cString: p)))?["kind"] else { return "?" }
        return kind
    }

    @Test("bad text, NULLs and malformed records are refused and nothing is written")
    func hostile() throws {
        var handle: OpaquePointer?
        #expect(nk_store_open_memory(&handle) == 0)
        let store = try #require(handle)
        defer { _ = nk_store_close(store) }
        var out: UnsafeMutablePointer<CChar>?
        #expect(nk_conversation_create(store, "Alice", &out) == 0)
        // A packed row: int64 size, then the conversation's id.
        let id = try #require(out.map { p in defer { nk_free(p) }; return UnsafeRawPointer(p).loadUnaligned(fromByteOffset: 8, as: Int64.self) })
        out = nil

        let invalid: [CChar] = [CChar(bitPattern: 0xFF), 0]
        invalid.withUnsafeBufferPointer { bad in
            #expect(nk_message_send(store, id, bad.baseAddress, &out) == 1)
            #expect(nk_message_receive(store, id, "ok", bad.baseAddress, &out) == 1)
        }
        #expect(nk_message_send(store, id, nil, &out) == 1)
        #expect(nk_message_send(store, id, "hi", nil) == 1)
        #expect(nk_message_send(store, id + 1, "hi", &out) == 3)
        #expect(lastErrorKind() == "not_found")
        #expect(nk_message_send(store, id, " \n", &out) == 2)
        #expect(nk_message_receive(store, id, "hi", "not a time", &out) == 2)
        var written: UnsafeMutableRawPointer?
        #expect(nk_message_insert_many(store, id, nil, 0, &written) == 1)
        #expect(written == nil)
        var array = ArrowArray(), schema = ArrowSchema()
        #expect(nk_conversation_history(store, id, 50, "forged.1.2.0000000000000000", Int64.min, Int64.min, &array, &schema, &out) == 2)
        #expect(nk_conversation_history(store, id, 0, nil, Int64.min, Int64.min, &array, &schema, &out) == 2)
        #expect(nk_conversation_history(store, id, 50, nil, Int64.min, Int64.min, nil, &schema, &out) == 1)
        #expect(out == nil && array.release == nil && schema.release == nil)

        var seq: Int64 = -1
        #expect(nk_store_last_change_seq(store, &seq) == 0 && seq == 1)  // only the conversation's creation
    }
}
