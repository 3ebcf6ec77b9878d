import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The postings of a write transaction's new records, built on a second thread while the
/// transaction goes on inserting, so that a bulk write (create_many, insert_many, an import) pays
/// for its search index with the other core instead of its own.
///
/// Every insert of an article or message hands its id and text here (``WriteContext/indexLater``),
/// in increasing id order. Texts are gathered into batches; a full batch is turned into postings by
/// a thread of its own, one thread at a time (so batches are added in order and one thread
/// touches the accumulator): while the previous batch's thread is still at work, the texts go on
/// gathering into the next batch instead of the writer waiting for it. When the transaction folds, the
/// postings are written from memory instead of reading the records back and building them on the
/// writer's thread (`SearchIndex.fold`).
///
/// The postings are used only when they are exactly the records that are new since the index's
/// indexed-through id (besides those pending from before the transaction, which the fold reads
/// itself): a change or removal of a record the pipeline holds, or ids out of order, drop them, and
/// the fold checks the count of new rows against the count handed here. Small transactions (a send,
/// a save) never start a thread: their few texts are built inline if a fold is due.
final class GramPipeline {
    let index: SearchIndex
    /// The first and last id handed in, and how many (nil first: none yet).
    private(set) var firstId: Int64?
    private(set) var lastId: Int64 = 0
    private(set) var count = 0
    /// False once the postings no longer describe the new records (see the type's comment).
    private(set) var valid = true

    private var batch: [SearchIndex.Document] = []
    private var batchBytes = 0
    /// Made when first needed: a transaction that never folds (a send) allocates no postings.
    private var sharedStorage: GramAccumulation?
    private var shared: GramAccumulation {
        if let sharedStorage { return sharedStorage }
        let made = GramAccumulation()
        sharedStorage = made
        return made
    }
    /// The thread building a batch, and that batch (nil when none runs).
    private var running: (thread: pthread_t, job: GramJob)?

    /// A batch is handed to a thread once it holds this much text (or records).
    static let batchBytes = 1 << 18
    static let batchRecords = 2_048

    init(_ index: SearchIndex) { self.index = index }

    deinit {
        join()
    }

    /// Takes the text of a record just inserted with `document.id` (above every id handed before).
    func add(_ document: SearchIndex.Document, bytes: Int) {
        guard valid else { return }
        guard document.id > lastId || firstId == nil else { return invalidate() }
        if firstId == nil { firstId = document.id }
        lastId = document.id
        count += 1
        batch.append(document)
        batchBytes += bytes
        if batchBytes >= Self.batchBytes || batch.count >= Self.batchRecords { startBatch() }
    }

    /// The postings no longer match the records (one of them changed or went): they are dropped.
    func invalidate() {
        valid = false
        join()
        batch = []
        batchBytes = 0
    }

    /// Runs `body` with the postings of every record handed in (waiting for the thread), if they
    /// are still valid; then starts afresh (the next records follow the fold).
    func drain<T>(_ body: (PostingAccumulator) throws -> T) throws -> T? {
        join()
        defer { reset() }
        guard valid, count > 0 else { return nil }
        let rest = batch
        batch = []
        batchBytes = 0
        shared.build(rest)
        var accumulator = shared.take()
        sharedStorage = nil
        defer { accumulator.release() }
        return try body(accumulator)
    }

    /// Forgets everything handed in so far (after a fold took it in, or dropped it).
    func reset() {
        join()
        batch = []
        batchBytes = 0
        firstId = nil
        lastId = 0
        count = 0
        valid = true
        sharedStorage?.accumulator.withLock { $0.clear() }
    }

    /// Hands the batch to a thread, unless the previous batch's thread is still at work: then the
    /// texts go on gathering (the next batch is all of them), and the writer goes on without waiting.
    private func startBatch() {
        if let running, !running.job.done.load(ordering: .acquiring) { return }
        join()
        let job = GramJob(shared: shared, documents: batch)
        batch = []
        batchBytes = 0
        if let thread = startThread({ job.run() }) {
            running = (thread, job)
        } else {
            job.run()  // no thread to be had: built here
        }
    }

    private func join() {
        if let running {
            pthread_join(running.thread, nil)
            self.running = nil
        }
    }
}

/// The accumulator a pipeline's threads add to, one at a time (each joins the one before), and the
/// writer reads once they are done: the lock is never contended, it only makes the hand-over
/// between threads one the compiler checks.
final class GramAccumulation: Sendable {
    let accumulator = Mutex(PostingAccumulator(expectedGrams: 1 << 12))

    deinit { accumulator.withLock { $0.release() } }

    /// The postings, leaving an empty accumulator in their place (the caller releases them).
    func take() -> PostingAccumulator {
        accumulator.withLock { accumulator in
            let taken = accumulator
            accumulator = PostingAccumulator(expectedGrams: 0)
            return taken
        }
    }

    /// Adds `documents`' grams, in order.
    func build(_ documents: [SearchIndex.Document]) {
        guard !documents.isEmpty else { return }
        accumulator.withLock { accumulator in
            var builder = KeyBuilder()
            defer { builder.release() }
            for document in documents {
                for (field, text) in document.fields {
                    var text = text
                    text.withUTF8 { builder.build($0, fold: true) }
                    accumulator.add(key: builder.key, field: field, id: document.id)
                }
            }
        }
    }
}

/// One batch of a pipeline, run on its own thread.
final class GramJob: Sendable {
    let shared: GramAccumulation
    let documents: [SearchIndex.Document]
    /// True once ``run()`` has added every document.
    let done = Atomic<Bool>(false)

    init(shared: GramAccumulation, documents: [SearchIndex.Document]) {
        self.shared = shared
        self.documents = documents
    }

    func run() {
        shared.build(documents)
        done.store(true, ordering: .releasing)
    }
}

/// The rows a fold writes for accumulated postings (``SearchIndex/write(_:_:indexIsEmpty:)``),
/// prepared in gram order one segment ahead on a thread of its own while the writer writes the
/// segment before: copying each gram's postings out of the accumulator, decoding a short list
/// into a tail, cutting a long one into blocks. The writer's thread then only binds and steps
/// (a fold of a bulk write's postings is about a fifth of that thread's time, half of it this).
///
/// `@unchecked Sendable`: the accumulator is only read, and `start` moved, by one thread at a time
/// (the segment's, joined in ``next()`` and ``stop()``) until ``stop()``.
final class GramRows: @unchecked Sendable {
    /// One gram's rows: a short list as its tail (encoded), or a long one as its stored bytes
    /// (`gaps`) and the blocks they are cut into (the tail then empty).
    struct Gram {
        var gram: UInt64
        var count: Int
        var tail: [UInt8]
        var gaps: [UInt8] = []
        var blocks: [(first: Int64, bytes: [UInt8])]?
    }

    /// A segment ends once its grams hold this many bytes of postings.
    static let segmentBytes = 1 << 20

    private let accumulator: PostingAccumulator
    private let order: [Int]
    private var start = 0
    private let prepared = WorkAhead<[Gram]>()

    /// Starts preparing the first segment of `accumulator`'s grams (which must stay alive and
    /// unchanged until ``stop()``).
    init(_ accumulator: PostingAccumulator) {
        self.accumulator = accumulator
        order = accumulator.sortedOrder()
        startNext()
    }

    /// The next segment in gram order (waiting for its thread), the one after it started
    /// meanwhile; nil after the last.
    func next() -> [Gram]? {
        guard let segment = prepared.take() else { return nil }
        startNext()
        return segment
    }

    /// Waits for the segment being prepared, if any (a write that stops early calls it).
    func stop() { _ = prepared.take() }

    private func startNext() {
        guard start < order.count else { return }
        prepared.start { self.prepare() }
    }

    /// Prepares the grams from `start` on, up to ``segmentBytes`` of postings.
    private func prepare() -> [Gram] {
        var segment: [Gram] = []
        var bytes = 0
        while start < order.count && bytes < Self.segmentBytes {
            let g = order[start]
            start += 1
            bytes += accumulator.byteCount(g)
            segment.append(Self.rows(of: g, in: accumulator))
        }
        return segment
    }

    /// The rows of gram `g`. `bytes` are its postings as a block stores them (first id, then
    /// gaps): a list longer than a block that way is longer as a tail too (plain ids), and is cut
    /// into blocks from these bytes, without a list of ids; a shorter one is decoded.
    private static func rows(of g: Int, in accumulator: PostingAccumulator) -> Gram {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(accumulator.byteCount(g))
        accumulator.bytes(of: g, into: &bytes)
        let gram = accumulator.gram(g), count = Int(accumulator.count(g))
        if bytes.count <= Postings.blockBytes {
            let tail = Postings.decode(bytes)
            if Postings.tailSize(tail) <= Postings.blockBytes { return Gram(gram: gram, count: count, tail: Postings.encodeTail(tail)) }
        }
        var cutter = BlockCutter()
        bytes.withUnsafeBytes { cutter.add(stored: $0) }
        return Gram(gram: gram, count: count, tail: Postings.encodeTail([]), gaps: bytes, blocks: cutter.finish())
    }
}
