import Testing
import NotesCAPI
import NotesKit
#if canImport(Glibc)
import Glibc
#endif

/// The import and export calls under careless or hostile input: an error code, never a crash.
@Suite("Import and export at the C ABI")
struct ExchangeExportsTests {
    func lastError() -> String {
        guard let p = nk_last_error() else { return "none" }
        defer { nk_free(p) }
        return String(cString: p)
    }

    @Test("NULL and malformed arguments are refused before any work")
    func hostile() throws {
        var handle: OpaquePointer?
        #expect(nk_store_open_memory(&handle) == 0)
        let store = try #require(handle)
        defer { _ = nk_store_close(store) }
        var out: UnsafeMutablePointer<CChar>?
        #expect(nk_store_export(store, nil, nil, nil, &out) == 1)
        #expect(nk_store_export(store, "/tmp/x.json", nil, nil, nil) == 1)
        #expect(nk_store_import(store, nil, nil, nil, nil, nil, &out) == 1)
        #expect(nk_store_import(store, "/tmp/x.json", nil, "{not json", nil, nil, &out) == 1)
        #expect(lastError().contains("options_json is not valid JSON"))
        #expect(nk_store_import(store, "/tmp/x.json", nil, "[1]", nil, nil, &out) == 1)
        #expect(nk_store_import(store, "/tmp/x.json", "docx", nil, nil, nil, &out) == 2)
        #expect(nk_store_import(store, "/tmp/x.json", nil, "{\"on_conflict\": 3}", nil, nil, &out) == 2)
        #expect(nk_store_import(nil, "/tmp/x.json", nil, nil, nil, nil, &out) == 1)
        let invalid: [CChar] = [-1, 0]
        #expect(nk_store_import(store, invalid, nil, nil, nil, nil, &out) == 1)
        #expect(nk_store_import(store, "/no/such/file.json", nil, nil, nil, nil, &out) == 3)
        #expect(out == nil)
    }
}
