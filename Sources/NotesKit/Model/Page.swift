/// One page of a keyset-paged list.
///
/// `nextCursor` is nil on the last page; pass it back to get the page after this one.
public struct Page<Item> {
    public var items: [Item]
    public var nextCursor: String?
    public var hasMore: Bool { nextCursor != nil }

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

extension Page: Sendable where Item: Sendable {}
extension Page: Equatable where Item: Equatable {}

/// Page sizes accepted by every paged call.
public enum PageLimit {
    public static let `default` = 20
    public static let range = 1...1_000

    static func check(_ limit: Int) throws {
        guard range.contains(limit) else {
            throw NotesError.validation("limit", "limit must be between \(range.lowerBound) and \(range.upperBound), got \(limit)")
        }
    }
}
