import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The subscribers of a store (``Store/subscribe(_:)``) and how committed changes reach them.
///
/// Every commit through the store's handle is handed to the subscribers on its committing thread,
/// after the commit and outside the store's lock, in calls of at most
/// ``WriteContext/maxBufferedChanges`` changes (a bulk commit's are read back from the feed).
///
/// A backend that can wake a reader when another connection commits (``FeedWakeUpSource``:
/// PostgreSQL's `NOTIFY`) also gets the commits of other handles, processes and hosts: while there
/// are subscribers, a follower thread waits for wake-ups and hands out what the feed holds after
/// the newest seq handed out (`delivered`). Deliveries then take turns (`delivering`), so the
/// subscribers see every change they may read once, in seq order — the feed's seqs are commit
/// order (every write holds the store's write lock until it commits, so a reader never skips a
/// slower writer's change). A commit through this handle is still delivered on its committing
/// thread, in calls of its own: between its COMMIT and its delivery its seqs are `local`, which
/// the follower stops short of. A subscriber's callback that writes to the store gets its commit
/// delivered after the call it is in, by the thread that is delivering.
final class ChangeDelivery: Sendable {
    typealias Callback = @Sendable ([Change]) -> Void
    /// Reads the feed after a seq, at most `limit` changes (the store's ``Store/changes(since:limit:)``).
    typealias Reader = @Sendable (_ since: Int64, _ limit: Int) throws -> [Change]

    private struct State {
        var subscribers: [Int64: Callback] = [:]
        /// The first seqs of bulk commits being read back for the subscribers: compaction keeps
        /// every change from the oldest of them on.
        var pins: [Int64] = []
        /// While following: the newest seq handed out.
        var delivered: Int64 = 0
        /// This handle's commit between its COMMIT and its delivery (following only).
        var local: (first: Int64, last: Int64)?
        /// True when a delivery stopped short of `local`, or a callback committed: the committing
        /// thread reads on after delivering its own changes.
        var behind = false
        var follower: FeedFollower?
    }

    private let state = Mutex(State())
    private let nextToken = Atomic<Int64>(1)
    /// Held by the thread handing out changes while following (`deliveringThread`).
    private let delivering = Mutex<Void>(())
    private let deliveringThread = Atomic<UInt>(0)
    private let source: FeedWakeUpSource?

    init(wakeUps source: FeedWakeUpSource?) {
        self.source = source
    }

    var isEmpty: Bool { state.withLock { $0.subscribers.isEmpty } }

    /// The oldest change a subscriber is still to be handed, or nil.
    var oldestPinnedSeq: Int64? {
        state.withLock { s in
            let following = s.follower == nil ? nil : s.delivered + 1
            return (s.pins + (following.map { [$0] } ?? [])).min()
        }
    }

    /// Adds a subscriber. The first one on a backend with wake-ups starts following the feed from
    /// its newest seq (`head`, read under the store's lock).
    func subscribe(_ callback: @escaping Callback, head: () throws -> Int64, read: @escaping Reader) throws -> Int64 {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).oldValue
        guard let source else {
            state.withLock { $0.subscribers[token] = callback }
            return token
        }
        // Read before taking `state`: a committing thread holds the store's lock and waits for it.
        let start = state.withLock { $0.follower == nil } ? try head() : nil
        state.withLock { s in
            s.subscribers[token] = callback
            if s.follower == nil {
                if let start { s.delivered = max(s.delivered, start) }
                s.follower = FeedFollower(source) { [weak self] in self?.catchUp(read) }
            }
        }
        return token
    }

    /// Removes a subscriber (false when `token` was none); the last one stops the follower.
    func unsubscribe(_ token: Int64) -> Bool {
        let (removed, follower): (Bool, FeedFollower?) = state.withLock { s in
            let removed = s.subscribers.removeValue(forKey: token) != nil
            guard s.subscribers.isEmpty, let follower = s.follower else { return (removed, nil) }
            s.follower = nil
            return (removed, follower)
        }
        follower?.stop(wait: !isDelivering)
        return removed
    }

    /// Removes every subscriber and stops following (the store closes).
    func removeAll() {
        let follower: FeedFollower? = state.withLock { s in
            s.subscribers.removeAll()
            defer { s.follower = nil }
            return s.follower
        }
        follower?.stop(wait: !isDelivering)
    }

    // MARK: - Commits through this handle

    /// Called under the store's lock just before a write's COMMIT: its seqs are this handle's to
    /// deliver. Returns whether a pin was taken (a bulk commit to read back).
    func committing(first: Int64?, last: Int64, overflowed: Bool) -> Bool {
        guard let first else { return false }
        return state.withLock { s in
            guard !s.subscribers.isEmpty else { return false }
            if s.follower != nil { s.local = (first, last) }
            if overflowed { s.pins.append(first) }
            return overflowed
        }
    }

    /// Called when the COMMIT failed (nothing of it to deliver).
    func abandoned(pinned: Bool, first: Int64?) {
        guard let first else { return }
        delivered(local: first)
        if pinned { unpin(first) }
    }

    private func unpin(_ first: Int64) {
        state.withLock { s in if let i = s.pins.firstIndex(of: first) { s.pins.remove(at: i) } }
    }

    /// This handle's commit from `first` on is out of the follower's way (another may be in it by now).
    private func delivered(local first: Int64) {
        state.withLock { s in if s.local?.first == first { s.local = nil } }
    }

    /// True on the thread handing out changes while following (a subscriber's callback).
    private var isDelivering: Bool { deliveringThread.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Hands a commit through this handle to the subscribers, on the committing thread.
    func committed(_ commit: WriteContext.Committed, pinned: Bool, read: Reader) {
        guard let first = commit.firstSeq else { return }
        defer { if pinned { unpin(first) } }
        guard !isEmpty else { return delivered(local: first) }
        guard state.withLock({ $0.follower != nil }) else {
            if commit.overflowed { readBack(after: first - 1, through: commit.lastSeq, read) } else { hand(commit.changes) }
            return
        }
        if isDelivering {
            // A callback wrote: the delivery this thread is in hands it out after the current call.
            state.withLock { s in
                if s.local?.first == first { s.local = nil }
                s.behind = true
            }
            return
        }
        delivering.withLock { _ in
            deliveringThread.store(UInt(pthread_self()), ordering: .releasing)
            defer { deliveringThread.store(0, ordering: .releasing) }
            deliverFeed(through: first - 1, read)  // other connections' commits before this one
            let delivered = state.withLock { $0.delivered }
            if commit.lastSeq > delivered {
                if commit.overflowed || delivered >= first {
                    readBack(after: max(delivered, first - 1), through: commit.lastSeq, read)
                } else {
                    hand(commit.changes)
                }
                state.withLock { $0.delivered = max($0.delivered, commit.lastSeq) }
            }
            let behind = state.withLock { s in
                if s.local?.first == first { s.local = nil }
                defer { s.behind = false }
                return s.behind
            }
            if behind { deliverFeed(through: .max, read) }
        }
    }

    // MARK: - Following other connections

    /// The follower's work after a wake-up: hands out what the feed holds past `delivered`.
    private func catchUp(_ read: Reader) {
        delivering.withLock { _ in
            deliveringThread.store(UInt(pthread_self()), ordering: .releasing)
            defer { deliveringThread.store(0, ordering: .releasing) }
            deliverFeed(through: .max, read)
        }
    }

    /// Under `delivering`: hands out the feed's changes after `delivered` up to `limit`, stopping
    /// short of this handle's commit in flight (then `behind`: its committing thread reads on).
    private func deliverFeed(through limit: Int64, _ read: Reader) {
        while true {
            let (since, bound): (Int64, Int64) = state.withLock { s in
                guard let local = s.local, local.first - 1 < limit else { return (s.delivered, limit) }
                s.behind = true
                return (s.delivered, local.first - 1)
            }
            guard since < bound, !isEmpty,
                  let page = try? read(since, WriteContext.maxBufferedChanges).filter({ $0.seq <= bound }),
                  let end = page.last?.seq else { return }
            hand(page)
            state.withLock { $0.delivered = max($0.delivered, end) }
        }
    }

    /// Reads the committed changes `(after, through]` back from the feed and hands them out, a page at a time.
    private func readBack(after since: Int64, through last: Int64, _ read: Reader) {
        var since = since
        while since < last {
            guard let page = try? read(since, WriteContext.maxBufferedChanges).filter({ $0.seq <= last }),
                  let end = page.last?.seq else { return }
            hand(page)
            since = end
        }
    }

    private func hand(_ changes: [Change]) {
        let callbacks = state.withLock { $0.subscribers.sorted { $0.key < $1.key }.map(\.value) }
        for callback in callbacks { callback(changes) }
    }
}

// MARK: - Wake-ups

/// Why ``FeedWakeUps/wait(stop:)`` returned.
enum FeedWakeUp {
    /// Another connection may have committed changes: read the feed.
    case changes
    /// The stop descriptor became readable.
    case stopped
    /// The wake-ups' connection broke: open new ones (and read the feed, for what was missed).
    case lost
}

/// A backend's signal that other connections committed changes (PostgreSQL: `LISTEN`). Made, used
/// and closed by the follower thread alone.
protocol FeedWakeUps: AnyObject {
    /// Blocks until a wake-up, or until the file descriptor `stop` becomes readable.
    func wait(stop: Int32) -> FeedWakeUp
    func close()
}

/// How a backend opens its ``FeedWakeUps`` (nil for a backend without: SQLite).
struct FeedWakeUpSource: Sendable {
    let open: @Sendable () throws -> any FeedWakeUps
}

/// The thread that follows the feed for a store's subscribers: waits for wake-ups and calls
/// `catchUp` after each (and after every (re)connection, for what came before it listened).
final class FeedFollower: Sendable {
    /// How long to wait before opening the wake-ups again after they failed.
    static let retryMilliseconds: Int32 = 1_000

    /// A pipe whose read end the thread polls beside its wake-ups: ``stop(wait:)`` writes to it.
    /// Closed when the follower goes (after its thread), so a write never meets a reused descriptor.
    private let stopRead: Int32
    private let stopWrite: Int32
    private let stopped = Atomic<Bool>(false)
    /// The follower's thread (its `pthread_self`, 0 before it runs).
    private let threadID = Atomic<UInt>(0)
    private let thread = Mutex<pthread_t?>(nil)

    init(_ source: FeedWakeUpSource, catchUp: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        } else {
            fds = [-1, -1]
        }
        stopRead = fds[0]
        stopWrite = fds[1]
        let started = startThread { [self] in run(source, catchUp) }
        thread.withLock { $0 = started }
    }

    deinit {
        if stopRead >= 0 { Glibc.close(stopRead) }
        if stopWrite >= 0 { Glibc.close(stopWrite) }
    }

    private func run(_ source: FeedWakeUpSource, _ catchUp: @Sendable () -> Void) {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        var wakeUps: (any FeedWakeUps)?
        while !stopped.load(ordering: .acquiring) {
            guard let current = wakeUps else {
                wakeUps = try? source.open()
                if wakeUps == nil { pause(); continue }
                catchUp()
                continue
            }
            switch current.wait(stop: stopRead) {
            case .changes: catchUp()
            case .stopped: break
            case .lost:
                current.close()
                wakeUps = nil
            }
        }
        wakeUps?.close()
    }

    /// Waits ``retryMilliseconds``, or until stopped.
    private func pause() {
        var fd = pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)
        _ = poll(&fd, 1, Self.retryMilliseconds)
    }

    /// Stops the thread; with `wait`, returns once it ended (never when called from the thread
    /// itself, or from a thread it may be waiting for: the delivering one).
    func stop(wait: Bool) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(stopWrite, &byte, 1)
        guard let started = thread.withLock({ $0 }) else { return }
        if wait && threadID.load(ordering: .acquiring) != UInt(pthread_self()) {
            pthread_join(started, nil)
        } else {
            pthread_detach(started)
        }
    }
}
