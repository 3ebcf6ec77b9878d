#if canImport(Glibc)
import Glibc
#endif

/// A search key compiled for matching: Knuth–Morris–Pratt over key code points.
///
/// Finds every non-overlapping occurrence, leftmost first (as repeated `str.find` does), in
/// O(n + m) for a text of n and a key of m code points, whatever the input: a hostile query
/// (`aaaa…ab` against `aaaa…`) cannot make it quadratic.
struct Pattern {
    let key: [UInt32]
    private let failure: [Int32]
    /// The key's UTF-8 where, in text whose every code point is a normalization boundary, a match
    /// is exactly these bytes (``literalFold`` saying for which case mode): when no other code
    /// point becomes any of the key's (the key is one run of ``Prefilter``: most CJK, digits,
    /// punctuation). Nil otherwise.
    private let literal: [UInt8]?
    private let literalFold: Bool

    /// With `fold`, also the key's ``literal`` for that case mode, when it has one.
    init(_ key: [UInt32], fold: Bool? = nil) {
        self.key = key
        if let fold, !key.isEmpty, Prefilter.isRun(key, fold: fold) {
            literal = key.flatMap { Prefilter.utf8($0) }
        } else {
            literal = nil
        }
        literalFold = fold ?? false
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
        if let literal, fold == literalFold { return Self.matches(literal: literal, count: m, in: utf8, into: &out) }
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

    /// ``matches(utf8:fold:into:)`` for a key with a ``literal``: whether every code point is a
    /// boundary, checked in one pass that only looks up what is neither ASCII nor a CJK Unified
    /// Ideograph from U+5000 (lead bytes E5...E9), then the literal's occurrences found by `memchr`
    /// for its last byte, their code-point offsets counted on the way (the bytes that do not
    /// continue a sequence, eight at a time).
    private static func matches(literal: [UInt8], count m: Int, in utf8: UnsafeBufferPointer<UInt8>,
                                into out: inout [Range<Int>]) -> Bool? {
        guard let base = utf8.baseAddress else { return false }
        let n = utf8.count
        let clean = SearchText.table.withUnsafeBufferPointer { table -> Bool in
            var i = 0
            let raw = UnsafeRawPointer(base)
            while i < n {
                let b = base[i]
                if b < 0x80 {
                    i += 1
                    // (A run of ASCII, eight bytes at a time.)
                    while i + 8 <= n, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
                } else if b &- 0xE5 < 5 {
                    i += 3
                } else {
                    let (v, width) = SearchText.decode(utf8, i)
                    i += width
                    if SearchText.info(v, table) & SearchText.boundaryBit == 0 { return false }
                }
            }
            return true
        }
        guard clean else { return nil }
        let mark = out.count
        literal.withUnsafeBufferPointer { needle in
            guard let nb = needle.baseAddress, needle.count <= n else { return }
            let width = needle.count
            let last = Int32(needle[width - 1])
            var counted = 0, index = 0  // code points before byte `counted`
            var from = width - 1        // the earliest byte a match can end on
            while from < n, let hit = memchr(base + from, last, n - from) {
                let end = base.distance(to: hit.assumingMemoryBound(to: UInt8.self)) + 1
                let start = end - width
                guard width == 1 || memcmp(base + start, nb, width - 1) == 0 else {
                    from = end
                    continue
                }
                index += UTF8.codePoints(in: UnsafeBufferPointer(start: base + counted, count: start - counted))
                out.append(index..<(index + m))
                index += m
                counted = end
                from = end + width - 1
            }
        }
        return out.count > mark
    }
}
