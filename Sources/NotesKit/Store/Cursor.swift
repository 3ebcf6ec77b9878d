/// Encodes and checks keyset cursors.
///
/// A cursor is `kind.key.id.mac`: the list it belongs to, the sort key and id of the last row the
/// caller saw, and a 64-bit FNV-1a tag over those with the store's secret. The tag makes cursors
/// tamper-evident (a forged, edited or other store's cursor is refused as `.validation`); it is not
/// a secret: a cursor reveals the position it encodes. A kind may go on, after a `~`, with what
/// else binds the cursor (its order and date range; a search's field, case mode and query digest):
/// such a cursor is refused by the same list in another order or range, and by every other search.
struct CursorCodec: Sendable {
    let secret: UInt64

    struct Position: Equatable {
        var key: Int64
        var id: Int64
    }

    func encode(kind: String, _ position: Position) -> String {
        // Written as bytes into one buffer (one allocation, not the five of interpolations and
        // concatenations: a page's cursor is made on every call; a number's text is inline).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(kind.utf8.count + 60)
        bytes += kind.utf8
        bytes.append(UInt8(ascii: "."))
        bytes += String(position.key).utf8
        bytes.append(UInt8(ascii: "."))
        bytes += String(position.id).utf8
        let h = tag(bytes)
        bytes.append(UInt8(ascii: "."))
        Self.appendHex(h, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The longest cursor text looked at: real cursors are under 100 bytes, and anything longer is
    /// refused before it is split (splitting a 100 MB string by characters takes seconds).
    static let maxLength = 1_024

    /// The position in `cursor`, or a `.validation` error naming `cursor`. O(1) for an oversized cursor.
    func decode(_ cursor: String, kind: String) throws -> Position {
        guard cursor.utf8.count <= CursorCodec.maxLength else {
            throw NotesError.validation("cursor", "the cursor is malformed (\(cursor.utf8.count) bytes long); pass next_cursor exactly as a page returned it",
                                        code: "cursor_malformed")
        }
        let parts = cursor.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let key = Int64(parts[1]), let id = Int64(parts[2]) else {
            throw NotesError.validation("cursor", "the cursor is malformed; pass next_cursor exactly as a page returned it", code: "cursor_malformed")
        }
        var expected: [UInt8] = []
        Self.appendHex(tag(parts[0..<3].joined(separator: ".").utf8), to: &expected)
        guard parts[3].utf8.elementsEqual(expected) else {
            throw NotesError.validation("cursor", "the cursor was not issued by this store; pass next_cursor exactly as a page of this store returned it",
                                        code: "cursor_foreign")
        }
        guard parts[0] == kind else {
            let list = { (kind: Substring) in kind.prefix { $0 != "~" } }
            if list(parts[0]) == list(Substring(kind)) {
                if kind.contains("search") {
                    throw NotesError.validation("cursor", "the cursor belongs to another search (another query, field, case mode, order or date range); pass next_cursor only to the search that returned it",
                                                code: "cursor_other_search")
                }
                throw NotesError.validation("cursor", "the cursor belongs to this list in another order or date range; pass next_cursor with the order, since and until of the call that returned it",
                                            code: "cursor_other_range")
            }
            throw NotesError.validation("cursor", "the cursor belongs to another list (\(list(parts[0]))), not to this one (\(list(Substring(kind))))",
                                        code: "cursor_other_list")
        }
        return Position(key: key, id: id)
    }

    private func tag<Bytes: Sequence<UInt8>>(_ payload: Bytes) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ secret
        for byte in payload {
            h ^= UInt64(byte)
            h = h &* 0x100_0000_01b3
        }
        // Final avalanche (splitmix64) so that nearby payloads give unrelated tags.
        h ^= h >> 30; h = h &* 0xbf58_476d_1ce4_e5b9
        h ^= h >> 27; h = h &* 0x94d0_49bb_1331_11eb
        return h ^ (h >> 31)
    }

    /// Appends `v` as 16 lowercase hex digits.
    private static func appendHex(_ v: UInt64, to bytes: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        for shift in stride(from: 60, through: 0, by: -4) {
            bytes.append(digits.utf8Start[Int((v >> UInt64(shift)) & 0xF)])
        }
    }
}
