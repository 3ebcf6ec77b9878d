#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a new POSIX thread and returns the thread, for `pthread_join`; nil when the
/// system gives no thread (the caller then does the work itself). The one place NotesKit starts a
/// thread: prefetch workers, ``WorkAhead``, the search postings' builder and a selection's background read.
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { context in
        guard let context else { return nil }
        Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().body()
        return nil
    }, context)
    guard rc == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        return nil
    }
    return thread
}

/// A thread's body, retained for the thread until it runs.
private final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// One item made on a thread of its own while the caller works on the one before: ``start(_:)``
/// makes it (on the caller's thread when the system gives no thread), ``take()`` waits for it and
/// hands it over. The read-aheads of the importers and the search index's fold use it, so at most
/// two items are in memory: the one worked on, the one made.
///
/// `@unchecked Sendable`: `made` is written by the making thread and read only after joining it.
final class WorkAhead<Item>: @unchecked Sendable {
    private var made: Item?
    private var thread: pthread_t?

    /// Starts making the next item (call ``take()`` before starting another).
    func start(_ make: @escaping @Sendable () -> Item) {
        thread = startThread { self.made = make() }
        if thread == nil { made = make() }
    }

    /// The item started (waiting for its thread), nil when none was.
    func take() -> Item? {
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
        defer { made = nil }
        return made
    }
}
