import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension Layout {
    /// The most threads ``prefetch(_:kind:threads:)`` uses.
    public static let maxPrefetchThreads = 64

    /// Measures and caches every row of `ids` that is not cached yet, on `threads` threads (0 or
    /// less: one per core), each with its own Pango font map; the calling thread is one of them.
    /// Returns how many rows were measured.
    ///
    /// Rows that fail to measure do not stop the others; the first failure (`.notFound` for an
    /// unknown id) is thrown once every thread is done. O(n / threads) measurements.
    @discardableResult
    public func prefetch(_ ids: [Int64], kind: RowOffsets.Kind = .article, threads: Int = 0) throws -> Int {
        try checkOpen()
        try sync()
        // A repeated id may be measured twice (the second insert replaces the first): cheaper than
        // a set of every id when prefetching millions.
        let todo: [Int64] = state.withLock { s in
            let todo = ids.filter { s.cache.peek(CacheKey.make(kind, $0)) == nil }
            s.cache.reserve(todo.count)
            return todo
        }
        guard !todo.isEmpty else { return 0 }
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let wanted = min(threads <= 0 ? cores : threads, Layout.maxPrefetchThreads)
        let job = PrefetchJob(layout: self, kind: kind, ids: todo)
        let workers = min(wanted, (todo.count + PrefetchJob.chunk - 1) / PrefetchJob.chunk)
        var started: [pthread_t] = []
        for _ in 1..<max(workers, 1) {
            guard let thread = startThread({ job.run() }) else { break }
            started.append(thread)
        }
        job.run()
        for thread in started { pthread_join(thread, nil) }
        if let error = job.firstError.withLock({ $0 }) { throw error }
        return job.measured.load(ordering: .sequentiallyConsistent)
    }

    /// Reads rows by id (skipping and reporting ids that do not exist) and measures them on this
    /// thread; with `allOrNothing`, measures nothing when an id is missing. Returns the entries,
    /// the feed position they were read at, and the missing ids.
    func fetchAndMeasure(_ ids: ArraySlice<Int64>, kind: RowOffsets.Kind, allOrNothing: Bool = false) throws -> ([HeightCache.Entry], Int64, [Int64]) {
        switch kind {
        case .article: try fetchAndMeasure(ids, allOrNothing: allOrNothing, fetch: ArticleStore.fetch) { try measure($0, with: $1) }
        case .message: try fetchAndMeasure(ids, allOrNothing: allOrNothing, fetch: MessageStore.fetch) { try measure($0, with: $1) }
        }
    }

    private func fetchAndMeasure<Row>(_ ids: ArraySlice<Int64>, allOrNothing: Bool, fetch: (Connection, Int64) throws -> Row?,
                                      measure: (Row, TextMeasurer) throws -> HeightCache.Entry) throws -> ([HeightCache.Entry], Int64, [Int64]) {
        let (rows, seq, missing) = try store.read { db in
            var rows: [Row] = []
            var missing: [Int64] = []
            for id in ids {
                if let row = try fetch(db, id) { rows.append(row) } else { missing.append(id) }
            }
            return (rows, try Feed.lastSeq(db), missing)
        }
        if allOrNothing && !missing.isEmpty { return ([], seq, missing) }
        let measurer = try TextMeasurer.current()
        return (try rows.map { try measure($0, measurer) }, seq, missing)
    }
}

/// The shared state of one ``Layout/prefetch(_:kind:threads:)``: worker threads take chunks of
/// ids from an atomic counter until none are left.
final class PrefetchJob: Sendable {
    static let chunk = 32

    let layout: Layout
    let kind: RowOffsets.Kind
    let ids: [Int64]
    let next = Atomic<Int>(0)
    let measured = Atomic<Int>(0)
    let firstError = Mutex<NotesError?>(nil)

    init(layout: Layout, kind: RowOffsets.Kind, ids: [Int64]) {
        self.layout = layout
        self.kind = kind
        self.ids = ids
    }

    func run() {
        while true {
            let start = next.wrappingAdd(PrefetchJob.chunk, ordering: .relaxed).oldValue
            guard start < ids.count, !layout.isClosed else { return }
            let slice = ids[start..<min(start + PrefetchJob.chunk, ids.count)]
            do {
                let (entries, seq, missing) = try layout.fetchAndMeasure(slice, kind: kind)
                layout.store(entries, readAt: seq)
                measured.wrappingAdd(entries.count, ordering: .relaxed)
                if let id = missing.first { fail(NotesError.notFound(kind.rawValue, id)) }
            } catch let error as NotesError {
                fail(error)
            } catch {
                fail(NotesError(.internalError, "unexpected error: \(error)"))
            }
        }
    }

    private func fail(_ error: NotesError) {
        firstError.withLock { if $0 == nil { $0 = error } }
    }
}
