#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// The text of `bytes` if they are valid UTF-8, else nil.
    ///
    /// Same answer as `String(validating:as:)`, faster: that initializer is generic over the
    /// encoding and not specialized, so every call looks up type metadata. This decodes with the
    /// specialized `String(decoding:as:)`, which replaces each invalid sequence with U+FFFD (bytes
    /// EF BF BD) and never swallows a valid one: the bytes were valid exactly when the text has as
    /// many U+FFFD as they had. Most texts have no 0xEF byte at all, so that check is one `memchr`.
    public static func validatingUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var text = String(decoding: bytes, as: UTF8.self)
        let output = text.withUTF8 { Self.replacementCount($0) }
        if output == 0 { return text }
        return output == Self.replacementCount(bytes) ? text : nil
    }

    /// How many times U+FFFD (EF BF BD) occurs in `bytes`.
    private static func replacementCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var count = 0
        var i = 0
        while i < bytes.count, let hit = memchr(base + i, 0xEF, bytes.count - i) {
            let at = UnsafeRawPointer(hit).assumingMemoryBound(to: UInt8.self) - base
            if at + 2 < bytes.count, base[at + 1] == 0xBF, base[at + 2] == 0xBD { count += 1 }
            i = at + 1
        }
        return count
    }
}
