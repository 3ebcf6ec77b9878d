#if canImport(Glibc)
import Glibc
#endif

/// The change feed's wake-ups on PostgreSQL (see ``FeedWakeUps``): a connection of its own that
/// `LISTEN`s on the channel every commit with feed rows notifies (migration `0002_feed_notify`:
/// the feed's trigger calls `pg_notify('noteskit_feed', owner)`), waking only for the notifications
/// of its own role — the only changes row-level security lets it read.
///
/// A notification says only "read the feed": the follower reads it from the seq it handed out
/// last, so a notification lost while the connection was down, or several merged into one, never
/// loses a change. Every ``idleMilliseconds`` without one it wakes anyway.
final class PostgresFeedWakeUps: FeedWakeUps {
    static let channel = "noteskit_feed"
    /// The longest wait without reading the feed.
    static let idleMilliseconds: Int32 = 30_000

    private let pg: PostgresConnection
    private let role: String

    init(uri: String) throws {
        pg = try PostgresConnection(uri: uri)
        do {
            try pg.execute("LISTEN \(Self.channel)")
            role = try pg.query("SELECT current_user").text(safe: 0, 0) ?? ""
        } catch {
            pg.close()
            throw error
        }
    }

    func wait(stop: Int32) -> FeedWakeUp {
        while true {
            guard let arrived = try? pg.notifications() else { return .lost }
            if arrived.contains(where: { $0.channel == Self.channel && $0.payload == role }) { return .changes }
            var fds = [pollfd(fd: pg.socket, events: Int16(POLLIN), revents: 0), pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, Self.idleMilliseconds)
            if ready == 0 { return .changes }
            if ready < 0 {
                if errno == EINTR { continue }
                return .lost
            }
            if fds[1].revents != 0 { return .stopped }
        }
    }

    func close() { pg.close() }
}

extension PostgresDatabase {
    /// A second connection to the store, listening for other connections' commits.
    var feedWakeUps: FeedWakeUpSource? {
        let uri = pg.uri
        return FeedWakeUpSource { try PostgresFeedWakeUps(uri: uri) }
    }
}
