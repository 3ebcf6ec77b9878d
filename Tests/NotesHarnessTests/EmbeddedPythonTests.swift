import CPython  // also brings libc (getenv, access, getpid) through Python.h
import Testing

/// Starts a CPython interpreter inside this test process, loads the built `libNotesCAPI.so`
/// through the `noteskit` package and runs a scripted session: `swift test` alone proves the
/// binding works end to end.
@Suite("Embedded Python harness")
struct EmbeddedPythonTests {
    static let root: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
        return path
    }()

    /// The shipped (release) library if it was built, else the debug one `swift build` makes.
    static var library: String? {
        if let env = getenv("NOTESKIT_LIBRARY") { return String(cString: env) }
        for config in ["release", "debug"] {
            let path = "\(root)/.build/\(config)/libNotesCAPI.so"
            if access(path, R_OK) == 0 { return path }
        }
        return nil
    }

    @Test("a Python session drives the real library through noteskit")
    func scenario() throws {
        let library = try #require(Self.library, "libNotesCAPI.so is not built: run `make lib` (or `swift build`) first")
        let dir = "/tmp/noteskit-harness-\(getpid())"
        let script = """
        import sys, os, shutil
        sys.path.insert(0, \(pythonString(Self.root + "/bindings/python/src")))
        os.environ["NOTESKIT_LIBRARY"] = \(pythonString(library))
        import noteskit as nk
        shutil.rmtree(\(pythonString(dir)), ignore_errors=True)
        os.makedirs(\(pythonString(dir)))
        path = os.path.join(\(pythonString(dir)), "notes.db")
        with nk.Store.open(path) as store:
            made = store.articles.create_many([{"title": f"t{i}", "content": "内容"} for i in range(25)])
            d = store.articles.new_draft(title="draft")
            d.content = "saved from the harness"
            saved = d.save()
            first = store.articles.list()
            second = store.articles.list(after=first.next_cursor)
            assert [a.id for a in first.items + second.items] == [saved.id] + [a.id for a in reversed(made)], "paging"
            assert not second.has_more
            try:
                store.articles.create(title="", content="x")
            except nk.ValidationError as e:
                assert e.field == "title"
            else:
                raise AssertionError("an empty title was saved")
            try:
                store.articles.get(10**9)
            except nk.NotFoundError:
                pass
        with nk.Store.open(path) as store:
            assert store.articles.count() == 26, "reopened"
        shutil.rmtree(\(pythonString(dir)))
        harness_ok = True
        """
        Py_InitializeEx(0)
        let status = PyRun_SimpleString(script)
        #expect(status == 0, "the Python scenario failed; its traceback is above")
        let main = PyImport_AddModule("__main__")
        let ok = PyObject_HasAttrString(main, "harness_ok")
        #expect(ok == 1)
    }

    func pythonString(_ s: String) -> String {
        var out = "'"
        for c in s {
            if c == "\\" || c == "'" { out.append("\\") }
            out.append(c)
        }
        return out + "'"
    }
}
