import Synchronization

/// Where each row of an ordered list sits, for scrolling: total height, the offset of a row, the
/// row at an offset, the rows in a viewport. Never measures anything.
///
/// Rows already measured (cached by the layout) count with their height, the others with the
/// layout's ``Layout/estimatedHeight``. The list updates in place, in O(log n) per row, when the
/// layout measures one of its rows (through any call, on any thread) or the change feed says one
/// changed (it counts as estimated until measured again). A Fenwick tree of heights answers every
/// query in O(log n), after the layout's one-query check of the change feed.
///
/// ```swift
/// let rows = try layout.rows(ids)
/// let visible = try rows.visible(offset: 1_200, height: 667)   // a Range of row indexes
/// _ = try layout.articleHeights(visible.map { ids[$0] })         // rows update in place
/// ```
public final class RowOffsets: Sendable {
    public enum Kind: String, Sendable {
        case article, message
    }

    public let layout: Layout
    public let kind: Kind
    public let ids: [Int64]
    private let state: Mutex<Tree>

    struct Tree {
        /// Each row's current height.
        var heights: [Double]
        var measured: [Bool]
        /// Fenwick tree over `heights`, 1-based.
        var sums: [Double]
        let rowOf: [Int64: Int32]

        init(ids: [Int64], estimate: Double) throws {
            heights = [Double](repeating: estimate, count: ids.count)
            measured = [Bool](repeating: false, count: ids.count)
            sums = []
            var rowOf: [Int64: Int32] = [:]
            rowOf.reserveCapacity(ids.count)
            for (row, id) in ids.enumerated() {
                if let earlier = rowOf.updateValue(Int32(row), forKey: id) {
                    throw NotesError.validation("ids", "id \(id) is listed twice (rows \(earlier) and \(row)); a list shows each row once")
                }
            }
            self.rowOf = rowOf
            rebuild()
        }

        /// Rebuilds the sums from `heights`, O(n).
        mutating func rebuild() {
            let n = heights.count
            sums = [Double](repeating: 0, count: n + 1)
            for i in 1...max(n, 1) where i <= n {
                sums[i] += heights[i - 1]
                let parent = i + (i & -i)
                if parent <= n { sums[parent] += sums[i] }
            }
        }

        mutating func set(_ row: Int, _ height: Double, measured isMeasured: Bool) {
            measured[row] = isMeasured
            let delta = height - heights[row]
            guard delta != 0 else { return }
            heights[row] = height
            var i = row + 1
            while i < sums.count {
                sums[i] += delta
                i += i & -i
            }
        }

        /// The sum of the heights of rows `0..<k`.
        func prefix(_ k: Int) -> Double {
            var total = 0.0
            var i = k
            while i > 0 {
                total += sums[i]
                i -= i & -i
            }
            return total
        }

        /// The largest k in 0...n whose prefix is below `y` (`strictly`) or at most `y`.
        func search(_ y: Double, strictly: Bool) -> Int {
            let n = heights.count
            var position = 0
            var remaining = y
            var step = n == 0 ? 0 : 1 << (Int.bitWidth - 1 - n.leadingZeroBitCount)
            while step > 0 {
                let next = position + step
                if next <= n, strictly ? sums[next] < remaining : sums[next] <= remaining {
                    position = next
                    remaining -= sums[next]
                }
                step >>= 1
            }
            return position
        }
    }

    init(layout: Layout, kind: Kind, ids: [Int64]) throws {
        self.layout = layout
        self.kind = kind
        self.ids = ids
        state = Mutex(try Tree(ids: ids, estimate: layout.estimatedHeight))
    }

    /// The number of rows.
    public var count: Int { ids.count }

    /// The height of all rows together. O(log n).
    public func totalHeight() throws -> Double {
        try read { $0.prefix($0.heights.count) }
    }

    /// The offset of the top of `row` (0...count; `count` gives the total height). O(log n).
    public func offset(of row: Int) throws -> Double {
        try read { tree in
            guard row >= 0, row <= tree.heights.count else { throw NotesError.validation("index", "row \(row) is out of range 0...\(tree.heights.count)") }
            return tree.prefix(row)
        }
    }

    /// The current height of `row` (measured, or estimated). O(1).
    public func height(of row: Int) throws -> Double {
        try read { tree in
            guard row >= 0, row < tree.heights.count else { throw NotesError.validation("index", "row \(row) is out of range 0..<\(tree.heights.count)") }
            return tree.heights[row]
        }
    }

    /// Whether `row`'s height was measured (false: it is the estimate). O(1).
    public func isMeasured(_ row: Int) throws -> Bool {
        try read { tree in
            guard row >= 0, row < tree.heights.count else { throw NotesError.validation("index", "row \(row) is out of range 0..<\(tree.heights.count)") }
            return tree.measured[row]
        }
    }

    /// The row whose span `[offset, offset + height)` contains `y`, or nil when `y` is above the
    /// first row or below the last. Zero-height rows contain nothing. O(log n).
    public func row(at y: Double) throws -> Int? {
        try checkFinite(y, "y")
        return try read { tree in
            guard y >= 0 else { return nil }
            let row = tree.search(y, strictly: false)
            return row < tree.heights.count ? row : nil
        }
    }

    /// The rows that intersect the viewport `[offset, offset + height)`, as a range of row indexes
    /// (empty when none does). O(log n).
    public func visible(offset: Double, height: Double) throws -> Range<Int> {
        try checkFinite(offset, "offset")
        try checkFinite(height, "viewport_height")
        guard height >= 0 else { throw NotesError.validation("viewport_height", "viewport_height must not be negative, got \(height)") }
        return try read { tree in
            let n = tree.heights.count
            let end = offset + height
            guard height > 0, end > 0 else { return 0..<0 }
            let first = offset <= 0 ? 0 : min(tree.search(offset, strictly: false), n)
            let stop = min(tree.search(end, strictly: true) + 1, n)
            return first < stop ? first..<stop : first..<first
        }
    }

    // MARK: - Updates

    /// Takes the cache's current heights for every row (called once the list is registered with
    /// its layout, under the layout's state lock).
    func refresh(from cache: HeightCache) {
        let keys = ids.map { CacheKey.make(kind, $0) }
        state.withLock { tree in
            for (row, key) in keys.enumerated() {
                if let entry = cache.peek(key) {
                    tree.heights[row] = layout.rowHeight(of: entry)
                    tree.measured[row] = true
                } else {
                    tree.heights[row] = layout.estimatedHeight
                    tree.measured[row] = false
                }
            }
            tree.rebuild()
        }
    }

    /// Rows measured (a height) or invalidated (nil: back to the estimate).
    func apply(_ updates: [(UInt64, Double?)]) {
        let wanted: CacheKey.Kind = kind == .article ? .article : .message
        state.withLock { tree in
            for (key, height) in updates where CacheKey.kind(key) == wanted {
                guard let row = tree.rowOf[CacheKey.id(key)] else { continue }
                tree.set(Int(row), height ?? layout.estimatedHeight, measured: height != nil)
            }
        }
    }

    private func read<T>(_ body: (Tree) throws -> T) throws -> T {
        try layout.checkOpen()
        try layout.sync()
        return try state.withLock { try body($0) }
    }

    private func checkFinite(_ value: Double, _ field: String) throws {
        guard value.isFinite else { throw NotesError.validation(field, "\(field) must be a finite number, got \(value)") }
    }
}

extension Layout {
    /// Row offsets for `ids`, in order (each id once: `.validation` otherwise), of articles or of
    /// messages. O(n); measures nothing.
    public func rows(_ ids: [Int64], kind: RowOffsets.Kind = .article) throws -> RowOffsets {
        try checkOpen()
        try sync()
        let rows = try RowOffsets(layout: self, kind: kind, ids: ids)
        register(rows)
        state.withLock { rows.refresh(from: $0.cache) }
        return rows
    }
}
