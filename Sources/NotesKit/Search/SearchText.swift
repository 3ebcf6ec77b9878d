@_spi(_Unicode) import Swift
#if canImport(Glibc)
import Glibc
#endif

/// How search compares text: the *search key* of a text.
///
/// The key is the text in Unicode Normalization Form C, then (unless the search is case-sensitive)
/// each code point replaced by its **simple case folding** (Unicode's `CaseFolding.txt` entries
/// with status C and S: one code point to one code point, so `ß` stays `ß` and `ẞ` folds to `ß`).
/// A query matches a text when the query's key is a substring of the text's key.
///
/// Normalization works segment by segment: a segment starts at a code point with canonical
/// combining class 0 whose NFC quick check is Yes (it neither decomposes nor combines with what
/// precedes it), and runs to the next such code point. NFC of a text is the NFC of its segments
/// put together, so a segment that NFC leaves unchanged maps code point to code point. A segment
/// that NFC changes is normalized step by step as Unicode defines it (each code point's canonical
/// decomposition, canonical ordering, canonical composition), each key code point remembering the
/// stored code points it came from: `e` + U+0301 → `é` points back to both, U+2126 OHM SIGN → `Ω`
/// and U+F900 → `豈` each to themselves alone, and in `a` + three U+0301 the two marks left over
/// point to their own places. That is how match spans, computed on the key, come back as
/// code-point offsets into the text as stored, covering just what matched.
///
/// Text that is already NFC (nearly all text) takes a fast path: one table lookup per code point.
enum SearchText {
    /// Marks a code point that starts a normalization segment and is NFC as it is
    /// (canonical combining class 0 and NFC_Quick_Check = Yes).
    static let boundaryBit: UInt32 = 1 << 31
    static let scalarMask: UInt32 = 0x1F_FFFF
    /// Planes 0 and 1 (every cased letter, CJK, emoji) are tabulated; the rest is computed.
    static let tableSize = 0x2_0000

    /// For each code point below `tableSize`: its simple case folding in the low 21 bits, and
    /// `boundaryBit`. Built once, on first use, from the standard library's Unicode data (a few
    /// milliseconds).
    static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: tableSize)
        for v in 0..<UInt32(tableSize) { table[Int(v)] = computeInfo(v) }
        return table
    }()

    /// The folding and boundary facts of one code point (surrogate values give a non-boundary
    /// identity entry; they never occur in valid UTF-8).
    static func computeInfo(_ v: UInt32) -> UInt32 {
        guard let scalar = Unicode.Scalar(v) else { return v }
        if v < 0x80 {
            let folded = (0x41...0x5A).contains(v) ? v + 0x20 : v
            return folded | boundaryBit
        }
        let properties = scalar.properties
        var info = v
        if properties.changesWhenCaseFolded { info = simpleFold(scalar) }
        if properties.canonicalCombiningClass.rawValue == 0 && isNFCQuickCheckYes(scalar) { info |= boundaryBit }
        return info
    }

    /// Simple case folding from the standard library's full case folding: the full folding when it
    /// is one code point, else the lowercase mapping when that is one code point, else the code
    /// point itself. This equals `CaseFolding.txt` C + S for every assigned code point (checked
    /// against Unicode 15's file when this was written; the tests repeat the rule in Python).
    static func simpleFold(_ scalar: Unicode.Scalar) -> UInt32 {
        let full = scalar.properties._caseFolded.unicodeScalars
        if full.count == 1, let first = full.first { return first.value }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        if lower.count == 1, let first = lower.first { return first.value }
        return scalar.value
    }

    /// NFC_Quick_Check = Yes for one code point, from the standard library's quick check.
    static func isNFCQuickCheckYes(_ scalar: Unicode.Scalar) -> Bool {
        var utf8 = String(scalar).utf8.map { $0 }
        return utf8.withUnsafeMutableBufferPointer { buffer in
            var span = UTF8Span(unchecked: UnsafeBufferPointer(buffer).span)
            return span.checkForNFC(quickCheck: true)
        }
    }

    /// The facts of code point `v`: ASCII and the CJK Unified Ideographs without a memory access
    /// (they are most of the text searched, and a table lookup per CJK character misses the cache),
    /// the rest of planes 0 and 1 from the table, the others computed.
    @inline(__always)
    static func info(_ v: UInt32, _ table: UnsafeBufferPointer<UInt32>) -> UInt32 {
        if v < 0x80 { return (v &- 0x41 < 26 ? v | 0x20 : v) | boundaryBit }
        if v &- 0x4E00 < 0x5200 { return v | boundaryBit } // U+4E00...U+9FFF
        return v < UInt32(tableSize) ? table[Int(v)] : computeInfo(v)
    }

    /// The code point at byte `i` of UTF-8 and its width. The bytes come from the store, so they
    /// are valid UTF-8 unless the file was changed behind the library's back: a sequence cut short
    /// by the end gives U+FFFD and the rest of the bytes, never a read past the end.
    @inline(__always)
    static func decode(_ utf8: UnsafeBufferPointer<UInt8>, _ i: Int) -> (UInt32, Int) {
        let b0 = UInt32(utf8[i])
        if b0 < 0x80 { return (b0, 1) }
        let left = utf8.count - i
        if b0 < 0xE0 {
            guard left >= 2 else { return (0xFFFD, left) }
            return ((b0 & 0x1F) << 6 | UInt32(utf8[i + 1] & 0x3F), 2)
        }
        if b0 < 0xF0 {
            guard left >= 3 else { return (0xFFFD, left) }
            return ((b0 & 0x0F) << 12 | UInt32(utf8[i + 1] & 0x3F) << 6 | UInt32(utf8[i + 2] & 0x3F), 3)
        }
        guard left >= 4 else { return (0xFFFD, left) }
        return ((b0 & 0x07) << 18 | UInt32(utf8[i + 1] & 0x3F) << 12 | UInt32(utf8[i + 2] & 0x3F) << 6 | UInt32(utf8[i + 3] & 0x3F), 4)
    }

    /// NFC of `segment` (code points starting at offset `start` of their text) computed as Unicode
    /// defines it — canonical decomposition of each code point, canonical ordering, canonical
    /// composition — with, for each code point of the result, the range of offsets of the code
    /// points it came from. O(n²) in the segment's length at worst (the ordering), and segments
    /// are a few code points.
    static func traceNFC(_ segment: [UInt32], from start: Int) -> [(value: UInt32, start: Int32, end: Int32)] {
        typealias Piece = (value: UInt32, ccc: UInt8, start: Int32, end: Int32)
        var pieces: [Piece] = []
        for (k, v) in segment.enumerated() {
            let scalar = Unicode.Scalar(v) ?? "\u{FFFD}"
            let at = Int32(start + k)
            for d in String(scalar)._nfd {
                pieces.append((d.value, d.properties.canonicalCombiningClass.rawValue, at, at + 1))
            }
        }
        // Canonical ordering: a mark moves before the marks of a higher class it follows.
        for i in pieces.indices.dropFirst() {
            var j = i
            while j > 0, pieces[j].ccc != 0, pieces[j - 1].ccc > pieces[j].ccc {
                pieces.swapAt(j, j - 1)
                j -= 1
            }
        }
        // Canonical composition: each piece joins the last starter unless something between blocks it.
        var out: [Piece] = []
        var starter: Int? = nil
        for piece in pieces {
            if let s = starter {
                let between = out.count - 1 > s
                let blocked = between && (out[out.count - 1].ccc == 0 || out[out.count - 1].ccc >= piece.ccc)
                if !blocked, let composite = primaryComposite(out[s].value, piece.value) {
                    out[s].value = composite
                    out[s].start = min(out[s].start, piece.start)
                    out[s].end = max(out[s].end, piece.end)
                    continue
                }
            }
            if piece.ccc == 0 { starter = out.count }
            out.append(piece)
        }
        return out.map { ($0.value, $0.start, $0.end) }
    }

    /// The primary composite of `a` followed by `b`, or nil: what NFC makes of the pair when it
    /// makes one code point of it (composition exclusions and Hangul included).
    static func primaryComposite(_ a: UInt32, _ b: UInt32) -> UInt32? {
        guard let x = Unicode.Scalar(a), let y = Unicode.Scalar(b) else { return nil }
        var pair = String.UnicodeScalarView()
        pair.append(x); pair.append(y)
        let composed = String(pair)._nfc.map(\.value)
        return composed.count == 1 ? composed[0] : nil
    }

    /// The search key of a query: NFC, then simple case folding unless `caseSensitive`.
    static func key(of text: String, caseSensitive: Bool) -> [UInt32] {
        var builder = KeyBuilder()
        defer { builder.release() }
        var text = text
        text.withUTF8 { builder.build($0, fold: !caseSensitive) }
        return builder.keyArray
    }
}

/// Builds search keys, reusing its buffers from one text to the next.
///
/// After `build`, `key` holds the key code points and `originalRange(of:)` maps key indexes back
/// to code-point offsets into the original text. O(n) in the text's length.
///
/// It owns raw memory: call `release()` when done (and do not copy it).
struct KeyBuilder {
    private var storage = RawArray<UInt32>()
    /// The key of the last text built; valid until the next `build`.
    var key: UnsafeBufferPointer<UInt32> { storage.buffer }
    var keyArray: [UInt32] { Array(storage.buffer) }
    /// Only when `identity` is false: for each key index, the original offsets it covers.
    private var starts: [Int32] = []
    private var ends: [Int32] = []
    /// True while every key code point maps to the original code point at the same index.
    private(set) var identity = true
    /// The code points of the segment being collected (slow path).
    private var segment: [UInt32] = []

    mutating func release() { storage.free() }

    /// The original code-point range of key code points `range` (a match): from the first to the
    /// last stored code point any of them came from. O(range.count).
    func originalRange(of range: Range<Int>) -> Range<Int> {
        if identity { return range }
        var lower = Int32.max, upper = Int32.min
        for k in range {
            lower = min(lower, starts[k])
            upper = max(upper, ends[k])
        }
        return Int(lower)..<Int(upper)
    }

    /// Builds the key of `utf8` (valid UTF-8, as SQLite and Swift strings hold it).
    mutating func build(_ utf8: UnsafeBufferPointer<UInt8>, fold: Bool) {
        storage.removeAll()
        identity = true
        SearchText.table.withUnsafeBufferPointer { table in
            let n = utf8.count
            var i = 0
            var index = 0 // original code-point index of the next code point
            // Fast path: every code point is a boundary, NFC as it is: the key is the folding.
            while i < n {
                let (v, width) = SearchText.decode(utf8, i)
                let info = SearchText.info(v, table)
                if info & SearchText.boundaryBit == 0 {
                    // A code point that may combine or reorder: finish the text on the slow path,
                    // from the start of the segment the previous code point began.
                    slowPath(utf8, from: i, index: index, fold: fold, table: table)
                    return
                }
                storage.append(fold ? info & SearchText.scalarMask : v)
                i += width
                index += 1
            }
        }
    }

    /// Segment-wise normalization from byte offset `i` (code-point index `index`) on. The key so
    /// far is identity-mapped; its last code point (if any) opens the segment `i` continues.
    private mutating func slowPath(_ utf8: UnsafeBufferPointer<UInt8>, from i: Int, index: Int, fold: Bool,
                                   table: UnsafeBufferPointer<UInt32>) {
        starts = (0..<Int32(storage.count)).map { $0 }
        ends = (0..<Int32(storage.count)).map { $0 + 1 }
        identity = false
        segment.removeAll(keepingCapacity: true)
        var segmentStart = index
        if index > 0 {
            // Re-open the previous code point's segment: take it back out of the key.
            let previous = lastScalar(utf8, before: i)
            storage.removeLast(); starts.removeLast(); ends.removeLast()
            segment.append(previous)
            segmentStart = index - 1
        }
        var position = index
        var decoder = Unicode.UTF8.ForwardParser()
        var iterator = UnsafeBufferPointer(rebasing: utf8[i...]).makeIterator()
        while case .valid(let encoded) = decoder.parseScalar(from: &iterator) {
            let v = Unicode.UTF8.decode(encoded).value
            if SearchText.info(v, table) & SearchText.boundaryBit != 0 && !segment.isEmpty {
                flush(segmentStart: segmentStart, fold: fold, table: table)
                segmentStart = position
            }
            segment.append(v)
            position += 1
        }
        if !segment.isEmpty { flush(segmentStart: segmentStart, fold: fold, table: table) }
    }

    private func lastScalar(_ utf8: UnsafeBufferPointer<UInt8>, before i: Int) -> UInt32 {
        var j = i - 1
        while j > 0 && utf8[j] & 0xC0 == 0x80 { j -= 1 }
        var decoder = Unicode.UTF8.ForwardParser()
        var iterator = UnsafeBufferPointer(rebasing: utf8[j..<i]).makeIterator()
        if case .valid(let encoded) = decoder.parseScalar(from: &iterator) { return Unicode.UTF8.decode(encoded).value }
        return 0xFFFD
    }

    /// Appends the key of the collected segment, which starts at original offset `segmentStart`.
    private mutating func flush(segmentStart: Int, fold: Bool, table: UnsafeBufferPointer<UInt32>) {
        var unchanged = segment.count == 1 && SearchText.info(segment[0], table) & SearchText.boundaryBit != 0
        if !unchanged {
            var text = String.UnicodeScalarView()
            for v in segment { text.append(Unicode.Scalar(v) ?? "\u{FFFD}") }
            unchanged = String(text)._nfc.elementsEqual(text)
        }
        if unchanged {
            for (k, v) in segment.enumerated() {
                storage.append(fold ? SearchText.info(v, table) & SearchText.scalarMask : v)
                starts.append(Int32(segmentStart + k)); ends.append(Int32(segmentStart + k + 1))
            }
        } else {
            // The key is our own step-by-step NFC, not the standard library's: the two agree except
            // where the standard library errs (`Å` + U+0F73 + U+0325 stays unreordered there).
            for piece in SearchText.traceNFC(segment, from: segmentStart) {
                storage.append(fold ? SearchText.info(piece.value, table) & SearchText.scalarMask : piece.value)
                starts.append(piece.start); ends.append(piece.end)
            }
        }
        segment.removeAll(keepingCapacity: true)
    }
}

/// A quick test on a text's raw UTF-8 that rules out most texts that cannot match, before any
/// decoding: the text's key can only contain the query's chosen key code point `c` if the
/// text's bytes contain `c` or a code point that becomes `c` (its case variants, and code points
/// NFC replaces with something containing `c`, such as U+212A KELVIN SIGN for `k` or a CJK
/// compatibility ideograph for its unified ideograph). A composite `c` (one NFC could build from
/// several code points, like `é` or a Hangul syllable) gets no prefilter.
struct Prefilter {
    /// UTF-8 encodings of every code point that can put `c` into a key.
    let needles: [[UInt8]]
    /// For a single needle with ASCII letters matched in either case: per byte of the needle,
    /// 0x20 for such a letter (the needle has its small letter), else 0 (see
    /// ``Pattern/caselessMatch(_:_:_:in:_:from:)``); nil otherwise.
    var caseless: [UInt8]? = nil

    /// For a query key: the prefilter on its longest run of two or more eligible code points that
    /// nothing else becomes (no producers: most CJK, digits, punctuation) or, when folding, that
    /// only their capital becomes (the ASCII letters but `k` and `s`, matched in either case), or
    /// else on its most selective-looking eligible code point, or nil.
    ///
    /// A run is one needle, its UTF-8: each of its code points in a text's key comes from itself
    /// (or its capital) in the text, and two that are adjacent in the key are adjacent in the text
    /// (NFC neither drops a code point nor moves one across a boundary; a mark between them would
    /// stay between them in the key), so a text whose key contains the run contains its bytes
    /// (with those letters in either case).
    static func make(for key: [UInt32], fold: Bool) -> Prefilter? {
        let producers = fold ? Self.foldedProducers : Self.exactProducers
        // (A small ASCII letter whose only producer is its capital: matched in either case.)
        func caselessLetter(_ c: UInt32) -> Bool { fold && c &- 0x61 < 26 && producers[c] == [c - 0x20] }
        var best = 0..<0, start = 0
        for (k, c) in key.enumerated() {
            if c == 0xFFFD || !isEligible(c) || (producers[c] != nil && !caselessLetter(c)) {
                start = k + 1
            } else if k + 1 - start > best.count {
                best = start..<(k + 1)
            }
        }
        if best.count >= 2 {
            let (needle, caseless) = bytes(of: key[best], eitherCase: caselessLetter)
            return Prefilter(needles: [needle], caseless: caseless)
        }
        let eligible = Set(key).filter { isEligible($0) }
        guard let c = eligible.max() else { return nil } // non-ASCII first, then late letters
        var needles = [utf8(c)]
        for x in producers[c] ?? [] { needles.append(utf8(x)) }
        return Prefilter(needles: needles)
    }

    /// Whether `utf8` contains one of the needles (with ``caseless``, its letters in either case).
    /// O(n) per needle: `memchr` for the needle's last byte (for CJK a continuation byte, rarer than
    /// the lead byte), then a check of the bytes before it (for a run, of the whole run).
    func mayMatch(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress, utf8.count > 0 else { return false }
        if let caseless {
            return needles[0].withUnsafeBufferPointer { n in
                caseless.withUnsafeBufferPointer { mask in
                    guard let nb = n.baseAddress, let mb = mask.baseAddress, n.count <= utf8.count else { return false }
                    return Pattern.caselessMatch(nb, mb, n.count, in: base, utf8.count, from: 0) != nil
                }
            }
        }
        let end = base + utf8.count
        for needle in needles {
            let found = needle.withUnsafeBufferPointer { n -> Bool in
                let width = n.count
                guard let nb = n.baseAddress, width <= utf8.count else { return false }
                let last = Int32(n[width - 1])
                var from = base + (width - 1)
                while from < end, let hit = memchr(from, last, end - from) {
                    let at = hit.assumingMemoryBound(to: UInt8.self)
                    if width == 1 || memcmp(at - (width - 1), nb, width - 1) == 0 { return true }
                    from = UnsafePointer(at) + 1
                }
                return false
            }
            if found { return true }
        }
        return false
    }

    /// A boundary code point that NFC never builds from others (no canonical decomposition).
    static func isEligible(_ c: UInt32) -> Bool {
        guard let scalar = Unicode.Scalar(c) else { return false }
        let info = SearchText.table.withUnsafeBufferPointer { SearchText.info(c, $0) }
        guard info & SearchText.boundaryBit != 0 else { return false }
        if c < 0x80 || c &- 0x4E00 < 0x5200 { return true }
        return String(scalar)._nfd.elementsEqual([scalar])
    }

    /// `run`'s UTF-8 and, when `eitherCase` holds for some of its code points (small ASCII
    /// letters), per byte 0x20 for theirs and 0 for the others: the mask of
    /// ``Pattern/caselessMatch(_:_:_:in:_:from:)`` (nil when none does).
    static func bytes(of run: some Sequence<UInt32>, eitherCase: (UInt32) -> Bool) -> (bytes: [UInt8], caseless: [UInt8]?) {
        var bytes: [UInt8] = [], mask: [UInt8] = [], letters = false
        for c in run {
            let encoded = utf8(c), letter = eitherCase(c)
            bytes += encoded
            mask += repeatElement(letter ? 0x20 : 0, count: encoded.count)
            letters = letters || letter
        }
        return (bytes, letters ? mask : nil)
    }

    static func utf8(_ c: UInt32) -> [UInt8] {
        Array(String(Unicode.Scalar(c) ?? "\u{FFFD}").utf8)
    }

    /// Key code point → the other code points whose key (as a lone code point, NFC then, when
    /// folding, simple case folding) contains it. Built once from the Unicode data: the code points
    /// NFC changes or that are not boundaries, and (when folding) those case folding changes.
    static let foldedProducers = producers(fold: true)
    static let exactProducers = producers(fold: false)

    private static func producers(fold: Bool) -> [UInt32: [UInt32]] {
        var out: [UInt32: [UInt32]] = [:]
        let table = SearchText.table
        var candidates: [UInt32] = []
        for x in 0..<UInt32(SearchText.tableSize) {
            let info = table[Int(x)]
            let folds = fold && info & SearchText.scalarMask != x
            if info & SearchText.boundaryBit == 0 || folds { candidates.append(x) }
        }
        candidates += Array(0x2F800...0x2FA1F) // CJK compatibility ideographs supplement (NFC singletons)
        for x in candidates {
            guard let scalar = Unicode.Scalar(x) else { continue }
            var produced = Set<UInt32>()
            for s in String(scalar)._nfc {
                produced.insert(fold ? SearchText.computeInfo(s.value) & SearchText.scalarMask : s.value)
            }
            for k in produced where k != x { out[k, default: []].append(x) }
        }
        return out
    }
}
