import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// UUID strings for `uid` fields: version 4, lower-case, hyphenated.
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
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex: StaticString = "0123456789abcdef"
        var out = [UInt8]()
        out.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(45) }
            out.append(hex.utf8Start[Int(byte >> 4)])
            out.append(hex.utf8Start[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
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
