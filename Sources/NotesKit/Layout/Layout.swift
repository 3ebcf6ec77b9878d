import Synchronization

/// Row heights and bubbles of a store's articles and messages at one width, measured with Pango
/// and cached.
///
/// The cache is keyed by (what: article or message, id, revision, width, style fingerprint): each
/// layout has its own cache, and its width and styles (their fingerprints) are fixed, so an entry
/// is found by kind and id and holds the revision it measured. It
/// follows the store's change feed (``Store/changes(since:limit:)``) before answering, so a write
/// through any handle or process is seen: an edited article is measured again once, an unchanged
/// one never, a deleted one is dropped, and rows inserted above never shift a height (heights are
/// keyed by id, never by position). It is bounded (LRU, ``cacheCapacityBytes``) and every method is
/// safe to call from many threads at once.
///
/// ```swift
/// let layout = try store.layout(width: 375)
/// let h = try layout.articleHeight(article.id)      // measured once, then cached
/// ```
public final class Layout: Sendable {
    public let store: Store
    public let width: Double
    public let articleStyle: ArticleRowStyle
    public let bubbleStyle: BubbleStyle
    /// The height reported for a row that was not measured yet (row offsets use it).
    public let estimatedHeight: Double
    public var cacheCapacityBytes: Int { state.withLock { $0.cache.capacityBytes } }

    /// The widest layout accepted, in pixels.
    public static let maxWidth = 100_000.0
    public static let defaultEstimatedHeight = 150.0
    /// The default bound of the cache: 64 MiB, about 1.4 million rows.
    public static let defaultCacheCapacityBytes = 64 << 20

    let state: Mutex<State>
    private let syncLock = Mutex<Void>(())
    private let closed = Atomic<Bool>(false)
    private let rowRegistry = Mutex<[WeakRows]>([])

    /// The cache and how far it has followed the change feed, changed together under one lock.
    struct State {
        var cache: HeightCache
        /// Every change with `seq <= syncedSeq` has been applied to the cache.
        var syncedSeq: Int64
        /// The applied changes with `seq > recentFloor`, so that a measurement read before some of
        /// them can tell whether they touched what it measured (see ``Layout/store(_:readAt:)``).
        var recent: [(seq: Int64, key: UInt64)] = []
        var recentFloor: Int64
    }

    /// Opens a layout `width` pixels wide. `cacheCapacityBytes` bounds the cache (at least 1 KiB;
    /// default 64 MiB, about 1.4 million rows). Throws `.validation` for a width or estimated height
    /// that is not a finite number in range, or a width too narrow for the styles' paddings.
    public init(store: Store, width: Double, articleStyle: ArticleRowStyle = ArticleRowStyle(), bubbleStyle: BubbleStyle = BubbleStyle(),
                estimatedHeight: Double = Layout.defaultEstimatedHeight, cacheCapacityBytes: Int = Layout.defaultCacheCapacityBytes) throws {
        let articleStyle = try articleStyle.validated()
        let bubbleStyle = try bubbleStyle.validated()
        guard width.isFinite, width > 0, width <= Layout.maxWidth else {
            throw NotesError.validation("width", "width must be a number of pixels between 1 and \(Int(Layout.maxWidth)), got \(width)")
        }
        let narrowest = max(articleStyle.minimumWidth, bubbleStyle.minimumWidth)
        guard width >= narrowest else {
            throw NotesError.validation("width", "width \(width) is too narrow for the styles' paddings and margins: it must be at least \(narrowest)")
        }
        guard estimatedHeight.isFinite, estimatedHeight >= 0, estimatedHeight <= 1_000_000 else {
            throw NotesError.validation("estimated_height", "estimated_height must be a number of pixels between 0 and 1000000, got \(estimatedHeight)")
        }
        let cache = try HeightCache(capacityBytes: cacheCapacityBytes)
        self.store = store
        self.width = width
        self.articleStyle = articleStyle
        self.bubbleStyle = bubbleStyle
        self.estimatedHeight = estimatedHeight
        let seq = try store.lastChangeSeq()
        state = Mutex(State(cache: cache, syncedSeq: seq, recentFloor: seq))
    }

    /// Drops the cache; every later call fails with `.closed`. Closing twice does nothing.
    public func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        state.withLock { $0.cache.removeAll() }
    }

    public var isClosed: Bool { closed.load(ordering: .sequentiallyConsistent) }

    func checkOpen() throws {
        if isClosed { throw NotesError(.closed, "the layout was closed") }
    }

    // MARK: - Articles

    /// The height of article `id`'s row: cached, or measured now (title and content, about 100 µs
    /// for 150 characters) and cached. `.notFound` for an unknown id. O(1) when cached.
    public func articleHeight(_ id: Int64) throws -> Double {
        try articleHeights([id])[0]
    }

    /// The heights of many rows in one call, in the order of `ids`: cached ones in O(1) each, the
    /// others measured on this thread and cached. `.notFound` (naming the id) if one does not exist.
    public func articleHeights(_ ids: [Int64]) throws -> [Double] {
        try entries(ids, kind: .article).map(rowHeight(of:))
    }

    /// The cache entry of each of `ids`, in order: looked up in one pass, the missing ones read in
    /// one read, measured on this thread and cached. `.notFound` for the first id that does not exist.
    func entries(_ ids: [Int64], kind: RowOffsets.Kind) throws -> [HeightCache.Entry] {
        try checkOpen()
        try sync()
        var found = [HeightCache.Entry?](repeating: nil, count: ids.count)
        var missing: [Int64] = []
        state.withLock { s in
            for (n, id) in ids.enumerated() {
                if let entry = s.cache.lookup(CacheKey.make(kind, id)) { found[n] = entry } else { missing.append(id) }
            }
        }
        var byID: [Int64: HeightCache.Entry] = [:]
        if !missing.isEmpty {
            var seen = Set<Int64>()
            missing = missing.filter { seen.insert($0).inserted }
            let (measured, seq, absent) = try fetchAndMeasure(missing[...], kind: kind, allOrNothing: true)
            if let id = absent.first { throw NotesError.notFound(kind.rawValue, id) }
            store(measured, readAt: seq)
            for entry in measured { byID[CacheKey.id(entry.key)] = entry }
        }
        return try ids.indices.map { n in
            if let entry = found[n] ?? byID[ids[n]] { return entry }
            throw NotesError(.internalError, "row \(ids[n]) was neither cached nor measured")
        }
    }

    /// Reads `ids` (all of them, or `.notFound` for the first missing one) in one read.
    func readArticles(_ ids: [Int64]) throws -> [Article] {
        try store.read { db in
            try ids.map { id in
                guard let article = try ArticleStore.fetch(db, id) else { throw NotesError.notFound("article", id) }
                return article
            }
        }
    }

    /// Measures an article's row: the content wrapped at the style's text width, and the title on
    /// one line when its box takes the line's height (a fixed box needs no measuring).
    func measure(_ article: Article, with measurer: TextMeasurer) throws -> HeightCache.Entry {
        let style = articleStyle
        let title = style.titleHeight != nil ? 0 :
            try measurer.measure(article.title, maxWidth: style.titleWidth(width), font: style.titleFontSpec, singleLine: true).height
        let content = try measurer.measure(article.content, maxWidth: style.contentTextWidth(width), font: style.contentFontSpec)
        return HeightCache.Entry(key: CacheKey.article(article.id), revision: article.revision,
                                 first: Int32(clamping: title), second: Int32(clamping: content.height))
    }

    // MARK: - Cache and change feed

    /// Applies every change committed since the last sync: one query on the store when nothing
    /// changed. Called at the start of every public query.
    func sync() throws {
        try syncLock.withLock { _ in
            var since = state.withLock { $0.syncedSeq }
            while true {
                let batch = try store.changes(since: since, limit: 1_000, withUIDs: false)
                guard let last = batch.last else { return }
                state.withLock { s in
                    let dropped = s.apply(batch)
                    notifyRows(dropped.map { ($0, nil) })
                }
                since = last.seq
                if batch.count < 1_000 { return }
            }
        }
    }

    /// Caches measured entries read when the change feed was at `seq`, unless a change applied
    /// since then touched one of them (that entry could be stale: it is measured again next time).
    func store(_ entries: [HeightCache.Entry], readAt seq: Int64) {
        guard !entries.isEmpty else { return }
        state.withLock { s in
            var kept: [(UInt64, Double?)] = []
            kept.reserveCapacity(entries.count)
            for entry in entries where s.mayStore(entry.key, readAt: seq) {
                s.cache.insert(entry)
                kept.append((entry.key, rowHeight(of: entry)))
            }
            notifyRows(kept)
        }
    }

    /// The row height an entry stands for.
    func rowHeight(of entry: HeightCache.Entry) -> Double {
        switch CacheKey.kind(entry.key) {
        case .article:
            return articleStyle.rowHeight(titleHeight: Int(entry.first), contentHeight: Int(entry.second))
        case .message:
            return bubble(of: entry).rowHeight
        }
    }


    // MARK: - Statistics

    /// Hits, misses, entries and memory of the cache. O(1).
    public func stats() -> LayoutStats {
        state.withLock { s in
            LayoutStats(hits: s.cache.hits, misses: s.cache.misses, entries: s.cache.count, bytes: s.cache.bytes,
                        capacityBytes: s.cache.capacityBytes, evictions: s.cache.evictions, invalidations: s.cache.invalidations)
        }
    }

    // MARK: - Row offsets

    struct WeakRows {
        weak var rows: RowOffsets?
    }

    func register(_ rows: RowOffsets) {
        rowRegistry.withLock { list in
            list.removeAll { $0.rows == nil }
            list.append(WeakRows(rows: rows))
        }
    }

    /// Tells every live ``RowOffsets`` of this layout that these rows were measured (a height) or
    /// invalidated (nil). Called under the state lock, so that row offsets see the cache's changes
    /// in the order they happened (lock order: state, then registry, then a row list's own lock).
    func notifyRows(_ updates: [(UInt64, Double?)]) {
        guard !updates.isEmpty else { return }
        let live = rowRegistry.withLock { list in list.compactMap(\.rows) }
        for rows in live { rows.apply(updates) }
    }
}

/// What ``Layout/stats()`` reports.
public struct LayoutStats: Equatable, Sendable {
    public var hits: Int
    public var misses: Int
    public var entries: Int
    /// Memory the cache holds now, in bytes.
    public var bytes: Int
    public var capacityBytes: Int
    public var evictions: Int
    public var invalidations: Int
}

/// Cache keys: the kind in the top bit, the id below. Ids are positive (SQLite rowids).
enum CacheKey {
    enum Kind { case article, message }

    static func article(_ id: Int64) -> UInt64 { UInt64(bitPattern: id) & ~(1 << 63) }
    static func make(_ kind: RowOffsets.Kind, _ id: Int64) -> UInt64 { kind == .article ? article(id) : message(id) }
    static func message(_ id: Int64) -> UInt64 { UInt64(bitPattern: id) | (1 << 63) }
    static func kind(_ key: UInt64) -> Kind { key >> 63 == 0 ? .article : .message }
    static func id(_ key: UInt64) -> Int64 { Int64(bitPattern: key & ~(1 << 63)) }
}

extension Layout.State {
    /// Applies changes to the cache; returns the keys whose entries were dropped.
    mutating func apply(_ changes: [Change]) -> [UInt64] {
        var dropped: [UInt64] = []
        for change in changes {
            let key: UInt64
            switch (change.entity, change.operation) {
            case ("article", .update):
                key = CacheKey.article(change.entityId)
                // An entry already at the new revision was measured after the change: keep it.
                if let entry = cache.peek(key), entry.revision < (change.revision ?? .max), cache.invalidate(key) {
                    dropped.append(key)
                }
            case ("article", .delete):
                key = CacheKey.article(change.entityId)
                if cache.invalidate(key) { dropped.append(key) }
            case ("message", .update), ("message", .delete):
                // Deleting a conversation records a delete for each of its messages.
                key = CacheKey.message(change.entityId)
                if cache.invalidate(key) { dropped.append(key) }
            default:
                continue
            }
            recent.append((change.seq, key))
        }
        if let last = changes.last { syncedSeq = max(syncedSeq, last.seq) }
        if recent.count > 4_096 {
            recentFloor = recent[2_047].seq
            recent.removeFirst(2_048)
        }
        return dropped
    }

    /// Whether an entry for `key`, read when the feed was at `seq`, is known to be current: no
    /// change applied since then touched it.
    func mayStore(_ key: UInt64, readAt seq: Int64) -> Bool {
        if seq >= syncedSeq { return true }
        if seq < recentFloor { return false }
        for change in recent.reversed() {
            if change.seq <= seq { break }
            if change.key == key { return false }
        }
        return true
    }
}

extension Store {
    /// A layout of this store's rows `width` pixels wide. See ``Layout``.
    public func layout(width: Double, articleStyle: ArticleRowStyle = ArticleRowStyle(), bubbleStyle: BubbleStyle = BubbleStyle()) throws -> Layout {
        try Layout(store: self, width: width, articleStyle: articleStyle, bubbleStyle: bubbleStyle)
    }
}
