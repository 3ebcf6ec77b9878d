import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// UUID strings for `uid` fields: lower-case, hyphenated; version 4 (random), or version 7
/// (time-ordered, ``timeOrdered(count:at:)``) for chat messages.
///
/// The 122 random bits come from a xoshiro256** generator seeded from the system's entropy
/// (`SystemRandomNumberGenerator`) once per process (and again after a `fork`): drawing from the
/// kernel for every uid costs microseconds, which bulk imports of millions of rows notice.
public enum UID {
    private struct Generator {
        var seeded = false
        var s: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        mutating func next() -> UInt64 {
            if !seeded {
                var system = SystemRandomNumberGenerator()
                s = (system.next(), system.next(), system.next(), system.next() | 1)
                seeded = true
            }
            let result = rotl(s.1 &* 5, 7) &* 9
            let t = s.1 << 17
            s.2 ^= s.0; s.3 ^= s.1; s.1 ^= s.2; s.0 ^= s.3
            s.2 ^= t
            s.3 = rotl(s.3, 45)
            return result
        }

        func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
    }

    private static let generator: Mutex<Generator> = {
        // A forked child must not repeat its parent's sequence: it reseeds on first use.
        pthread_atfork(nil, nil) { UID.generator.withLock { $0.seeded = false } }
        return Mutex(Generator())
    }()

    /// A fresh random (version 4) UUID, e.g. `0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e`. O(1).
    public static func random() -> String {
        let (a, b) = generator.withLock { ($0.next(), $0.next()) }
        return text(high: (a & ~0xF000) | 0x4000, low: (b & ~(0xC0 << 56)) | (0x80 << 56))  // version 4, variant 10
    }

    /// `count` fresh time-ordered UUIDs (version 7, RFC 9562), in ascending order: the Unix time
    /// in milliseconds of `time`, then 74 random bits that count up by one within the batch.
    ///
    /// For rows appended in time order (chat messages): consecutive uids land next to each other
    /// in a uid index, so an insert touches the index's last page instead of a random one, and a
    /// bulk import walks it forward. Two batches made in the same millisecond start at unrelated
    /// random points, so they do not collide. O(count).
    public static func timeOrdered(count: Int, at time: Timestamp = .now()) -> [String] {
        guard count > 0 else { return [] }
        let (a, b) = generator.withLock { ($0.next(), $0.next()) }
        let milliseconds = UInt64(clamping: max(time.milliseconds, 0)) & 0xFFFF_FFFF_FFFF
        let high = milliseconds << 16 | 0x7000 | (a & 0x0FFF)       // time, version 7, rand_a
        let start = b & 0x1FFF_FFFF_FFFF_FFFF                         // rand_b, with room to count up
        return (0..<UInt64(count)).map { n in text(high: high, low: 0x8000_0000_0000_0000 | (start + n)) }  // variant 10
    }

    /// The hyphenated lower-case text of a UUID given as two big-endian 64-bit halves.
    static func text(high: UInt64, low: UInt64) -> String {
        withText(high: high, low: low) { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes of that text.
    public static let textCount = 36

    /// The same text handed to `body` in place (36 bytes on the stack, no `String`): every uid a
    /// read hands out is formatted here, or by ``write(high:low:to:)``.
    @inline(__always)
    static func withText<T>(high: UInt64, low: UInt64, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        var text: (UInt64, UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0, 0)  // 36 bytes
        return try withUnsafeMutableBytes(of: &text) { out in
            write(high: high, low: low, to: out.baseAddress!)  // (a tuple's bytes have an address)
            return try body(UnsafeRawBufferPointer(out))
        }
    }

    /// Writes the text into the ``textCount`` bytes at `out` (a column's buffer: no copy through
    /// the stack).
    @inline(__always)
    static func write(high: UInt64, low: UInt64, to out: UnsafeMutableRawPointer) {
        // 8-4-4-4-12 hex digits: the 16 of `high`, then the 16 of `low`, with four dashes.
        let a = hexDigits(UInt32(truncatingIfNeeded: high >> 32)), b = hexDigits(UInt32(truncatingIfNeeded: high))
        let c = hexDigits(UInt32(truncatingIfNeeded: low >> 32)), d = hexDigits(UInt32(truncatingIfNeeded: low))
        out.storeBytes(of: a.littleEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: b).littleEndian, toByteOffset: 9, as: UInt32.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: b >> 32).littleEndian, toByteOffset: 14, as: UInt32.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: c).littleEndian, toByteOffset: 19, as: UInt32.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: c >> 32).littleEndian, toByteOffset: 24, as: UInt32.self)
        out.storeBytes(of: d.littleEndian, toByteOffset: 28, as: UInt64.self)
        let dash: UInt8 = 45  // "-"
        out.storeBytes(of: dash, toByteOffset: 8, as: UInt8.self)
        out.storeBytes(of: dash, toByteOffset: 13, as: UInt8.self)
        out.storeBytes(of: dash, toByteOffset: 18, as: UInt8.self)
        out.storeBytes(of: dash, toByteOffset: 23, as: UInt8.self)
    }

    /// The 8 lower-case hex digits of `value` as ASCII, the most significant first in memory once stored
    /// little-endian: all 8 at once in one register (a digit at a time cost 170 ns per uid, a seventh
    /// of a page of articles; a table is a lazily made global, checked on every use).
    @inline(__always)
    private static func hexDigits(_ value: UInt32) -> UInt64 {
        var v = UInt64(value)
        v = ((v & 0xFFFF_0000) << 16) | (v & 0xFFFF)                            // 16-bit halves into 32-bit lanes
        v = ((v & 0x0000_FF00_0000_FF00) << 8) | (v & 0x0000_00FF_0000_00FF)    // bytes into 16-bit lanes
        v = ((v & 0x00F0_00F0_00F0_00F0) << 4) | (v & 0x000F_000F_000F_000F)    // nibbles into bytes: byte i = nibble i
        let letters = ((v &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101  // 1 in each byte whose nibble is > 9
        v = v &+ 0x3030_3030_3030_3030 &+ letters &* 39                           // "0"..."9", then "a" = "0" + 10 + 39
        return v.byteSwapped                                                     // the most significant nibble first
    }

    /// The two big-endian 64-bit halves of a UUID string (hyphens ignored, either case), or nil
    /// when it is not 32 hex digits: how a uid is stored (16 bytes, see `Statement.bind(_:uid:)`).
    /// Reads the text's bytes in place: a byte at a time through `utf8` cost ~45 instructions a
    /// byte, 1 600 a uid, and an import reads each record's uid several times.
    static func halves(_ uid: String) -> (high: UInt64, low: UInt64)? {
        var uid = uid
        return uid.withUTF8 { halves(utf8: $0) }
    }

    @inline(__always)
    private static func halves(utf8: UnsafeBufferPointer<UInt8>) -> (high: UInt64, low: UInt64)? {
        var high: UInt64 = 0, low: UInt64 = 0, digits = 0
        for c in utf8 {
            if c == 45 { continue }
            let digit: UInt64
            switch c {
            case 48...57: digit = UInt64(c - 48)
            case 97...102: digit = UInt64(c - 87)
            case 65...70: digit = UInt64(c - 55)
            default: return nil
            }
            if digits < 16 { high = high << 4 | digit } else if digits < 32 { low = low << 4 | digit } else { return nil }
            digits += 1
        }
        return digits == 32 ? (high, low) : nil
    }

    /// The canonical (lower-case) form of a UUID string, or a `.validation` error naming `field`.
    public static func normalized(_ text: String, field: String = "uid") throws -> String {
        let b = Array(text.utf8)
        let valid = b.count == 36 && b.enumerated().allSatisfy { i, c in
            if i == 8 || i == 13 || i == 18 || i == 23 { return c == 45 }
            return (48...57).contains(c) || (65...70).contains(c) || (97...102).contains(c)
        }
        guard valid else {
            throw NotesError.validation(field, "\(field) must be a UUID like 0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e, got \"\(text.prefix(60))\"")
        }
        return text.lowercased()
    }
}
