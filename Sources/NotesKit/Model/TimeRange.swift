/// A range of times, `since` inclusive and `until` exclusive; either bound may be absent.
///
/// A range whose `since` is not before its `until` holds nothing: reading it gives nothing, it is
/// not an error.
public struct TimeRange: Sendable, Hashable {
    public var since: Timestamp?
    public var until: Timestamp?

    public init(since: Timestamp? = nil, until: Timestamp? = nil) {
        self.since = since
        self.until = until
    }

    /// No bound on either side.
    public static let all = TimeRange()

    /// True when nothing can be in the range (`since` at or after `until`).
    public var isEmpty: Bool {
        guard let since, let until else { return false }
        return since >= until
    }

    public func contains(_ time: Timestamp) -> Bool {
        (since.map { time >= $0 } ?? true) && (until.map { time < $0 } ?? true)
    }

    /// What a cursor of a list in this range carries (empty for no bounds), so that a cursor is
    /// refused by the same list over another range.
    var cursorTag: String {
        self == .all ? "" : "\(since.map { String($0.milliseconds) } ?? "")_\(until.map { String($0.milliseconds) } ?? "")"
    }
}
