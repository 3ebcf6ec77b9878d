/// UUID strings for `uid` fields: version 4, lower-case, hyphenated.
public enum UID {
    /// A fresh random (version 4) UUID, e.g. `0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e`.
    public static func random() -> String {
        var rng = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(36)
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(45) }
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 15)])
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
