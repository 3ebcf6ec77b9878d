#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a new POSIX thread and returns the thread, for `pthread_join`; nil when the
/// system gives no thread (the caller then does the work itself). The one place NotesKit starts a
/// thread: prefetch workers, the search postings' builder and a selection's background read.
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
