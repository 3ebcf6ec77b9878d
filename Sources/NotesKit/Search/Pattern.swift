/// A search key compiled for matching: Knuth–Morris–Pratt over key code points.
///
/// Finds every non-overlapping occurrence, leftmost first (as repeated `str.find` does), in
/// O(n + m) for a text of n and a key of m code points, whatever the input: a hostile query
/// (`aaaa…ab` against `aaaa…`) cannot make it quadratic.
struct Pattern {
    let key: [UInt32]
    private let failure: [Int32]

    init(_ key: [UInt32]) {
        self.key = key
        var failure = [Int32](repeating: 0, count: key.count)
        var k = 0
        for i in 1..<max(key.count, 1) {
            while k > 0 && key[i] != key[k] { k = Int(failure[k - 1]) }
            if key[i] == key[k] { k += 1 }
            failure[i] = Int32(k)
        }
        self.failure = failure
    }

    /// Appends the key-index ranges of every non-overlapping match in `text` to `out`; returns
    /// whether there was at least one.
    @discardableResult
    func matches(in t: UnsafeBufferPointer<UInt32>, into out: inout [Range<Int>]) -> Bool {
        let m = key.count
        guard m > 0, t.count >= m else { return false }
        var found = false
        key.withUnsafeBufferPointer { p in
            failure.withUnsafeBufferPointer { f in
                do {
                    let first = p[0]
                    var k = 0
                    var i = 0
                    let n = t.count
                    while i < n {
                        if k == 0 {
                            // Skip quickly to the next code point that can start a match.
                            while i < n && t[i] != first { i += 1 }
                            if i == n { break }
                        }
                        let c = t[i]
                        while k > 0 && c != p[k] { k = Int(f[k - 1]) }
                        if c == p[k] { k += 1 }
                        i += 1
                        if k == m {
                            out.append((i - m)..<i)
                            found = true
                            k = 0
                        }
                    }
                }
            }
        }
        return found
    }

    /// Matches straight on UTF-8, folding as it decodes, for text whose every code point is a
    /// normalization boundary (its key is its folding, index for index: nearly all text). Returns
    /// nil, with `out` untouched, as soon as a code point needs normalization: the caller then
    /// builds the key with ``KeyBuilder``.
    func matches(utf8: UnsafeBufferPointer<UInt8>, fold: Bool, into out: inout [Range<Int>]) -> Bool? {
        let m = key.count
        guard m > 0 else { return false }
        let mark = out.count
        let mask = fold ? SearchText.scalarMask : UInt32.max
        var clean = true
        SearchText.table.withUnsafeBufferPointer { table in
            key.withUnsafeBufferPointer { p in
                failure.withUnsafeBufferPointer { f in
                    let n = utf8.count
                    var i = 0, index = 0, k = 0
                    while i < n {
                        let (v, width) = SearchText.decode(utf8, i)
                        i += width
                        let info = SearchText.info(v, table)
                        if info & SearchText.boundaryBit == 0 { clean = false; return }
                        let c = fold ? info & mask : v
                        index += 1
                        while k > 0 && c != p[k] { k = Int(f[k - 1]) }
                        if c == p[k] { k += 1 }
                        if k == m {
                            out.append((index - m)..<index)
                            k = 0
                        }
                    }
                }
            }
        }
        guard clean else {
            out.removeSubrange(mark...)
            return nil
        }
        return out.count > mark
    }
}
