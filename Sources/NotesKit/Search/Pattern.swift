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
    /// is exactly these bytes (``literalFold`` saying for which case mode; see ``literalForm(_:fold:)``),
    /// ASCII letters in either case where ``caseless`` has 0x20. Nil otherwise.
    private let literal: [UInt8]?
    /// Per byte of ``literal``: 0x20 for an ASCII letter matched in either case, else 0; nil when
    /// no byte is.
    private let caseless: [UInt8]?
    private let literalFold: Bool

    /// With `fold`, also the key's ``literal`` for that case mode, when it has one.
    init(_ key: [UInt32], fold: Bool? = nil) {
        self.key = key
        if let fold, let form = Self.literalForm(key, fold: fold) {
            (literal, caseless) = form
        } else {
            (literal, caseless) = (nil, nil)
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

    /// Whether ``matches(utf8:fold:into:)`` matches bytes for `fold` (it then needs no prefilter
    /// first: it rules a text out in one pass).
    func isLiteral(fold: Bool) -> Bool { literal != nil && fold == literalFold }

    /// The key's ``literal`` form for `fold`, when it has one. In text whose every code point is a
    /// normalization boundary, the text's key is the text folded code point by code point (or the
    /// text itself, case-sensitive); so a key code point `c` is found exactly where its UTF-8 is
    /// when no other *boundary* code point folds into `c` (the code points NFC changes, such as
    /// U+212A KELVIN SIGN or the CJK compatibility ideographs, are never in such text): every key
    /// when case-sensitive, and when folding every code point that case folding does not produce
    /// (CJK, digits, punctuation), and the ASCII letters, whose only other boundary code point is
    /// their capital (not `s`: U+017F LONG S folds to it), matched in either case.
    static func literalForm(_ key: [UInt32], fold: Bool) -> (bytes: [UInt8], caseless: [UInt8]?)? {
        guard !key.isEmpty else { return nil }
        let producers = fold ? Prefilter.foldedProducers : Prefilter.exactProducers
        let isBoundary = { (c: UInt32) in SearchText.table.withUnsafeBufferPointer { SearchText.info(c, $0) } & SearchText.boundaryBit != 0 }
        let isLetter = { (c: UInt32) in fold && c &- 0x61 < 26 }
        for c in key {
            guard c != 0xFFFD, isBoundary(c) else { return nil }
            let others = (producers[c] ?? []).filter(isBoundary)
            guard others == (isLetter(c) ? [c - 0x20] : []) else { return nil }
        }
        return Prefilter.bytes(of: key, eitherCase: isLetter)
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
        if let literal, fold == literalFold {
            return Self.matches(literal: literal, caseless: caseless, count: m, in: utf8, into: &out)
        }
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
    /// Ideograph from U+5000 (lead bytes E5...E9), then the literal's occurrences (found by `memchr`
    /// for its last byte; with ``caseless`` letters, by a scan for its first byte in either case,
    /// eight bytes at a time), their code-point offsets counted on the way (the bytes that do not
    /// continue a sequence, eight at a time).
    private static func matches(literal: [UInt8], caseless: [UInt8]?, count m: Int, in utf8: UnsafeBufferPointer<UInt8>,
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
        var counted = 0, index = 0  // code points before byte `counted`
        // A match of `width` bytes from byte `start`.
        func found(_ start: Int, _ width: Int) {
            index += UTF8.codePoints(in: UnsafeBufferPointer(start: base + counted, count: start - counted))
            out.append(index..<(index + m))
            index += m
            counted = start + width
        }
        literal.withUnsafeBufferPointer { needle in
            guard let nb = needle.baseAddress, needle.count <= n else { return }
            let width = needle.count
            if let caseless {
                caseless.withUnsafeBufferPointer { mask in
                    guard let mb = mask.baseAddress else { return }
                    var i = 0
                    while let start = Self.caselessMatch(nb, mb, width, in: base, n, from: i) {
                        found(start, width)
                        i = start + width
                    }
                }
                return
            }
            let last = Int32(needle[width - 1])
            var from = width - 1        // the earliest byte a match can end on
            while from < n, let hit = memchr(base + from, last, n - from) {
                let end = base.distance(to: hit.assumingMemoryBound(to: UInt8.self)) + 1
                let start = end - width
                guard width == 1 || memcmp(base + start, nb, width - 1) == 0 else {
                    from = end
                    continue
                }
                found(start, width)
                from = end + width - 1
            }
        }
        return out.count > mark
    }

    /// The first byte offset from `from` where the `width` bytes of `needle` occur in the `n`
    /// bytes at `base`, byte k matching when (byte | mask[k]) == needle[k] (an ASCII letter's mask,
    /// 0x20, takes either case to its small letter, and no other byte to it), or nil. Skips eight
    /// bytes at a time while none of them can be the first.
    @inline(__always)
    static func caselessMatch(_ needle: UnsafePointer<UInt8>, _ mask: UnsafePointer<UInt8>, _ width: Int,
                              in base: UnsafePointer<UInt8>, _ n: Int, from: Int) -> Int? {
        let first = needle[0], firstMask = mask[0]
        let ones: UInt64 = 0x0101_0101_0101_0101
        let spread = ones &* UInt64(first), spreadMask = ones &* UInt64(firstMask)
        let raw = UnsafeRawPointer(base)
        var i = from
        while i + width <= n {
            while i + 8 <= n {
                let x = (raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) | spreadMask) ^ spread
                if (x &- ones) & ~x & 0x8080_8080_8080_8080 != 0 { break }
                i += 8
            }
            guard i + width <= n else { return nil }
            var k = 0
            while k < width, base[i + k] | mask[k] == needle[k] { k += 1 }
            if k == width { return i }
            i += 1
        }
        return nil
    }
}
