#if canImport(Glibc)
import Glibc
#endif

/// libpq, PostgreSQL's client library, loaded with `dlopen` the first time a `postgresql://` store
/// is opened.
///
/// The shipped library does not link libpq: a user who only ever opens SQLite files needs neither a
/// server nor libpq on the machine (`ldd libNotesCAPI.so` does not list it). The functions used are
/// looked up by name from `libpq.so.5` (Debian's `libpq5`, which `libpq-dev` and `postgresql`
/// bring); a machine without it gets a `StorageError` saying what to install.
///
/// Only this file and `PostgresConnection.swift` touch libpq.
struct LibPQ: Sendable {
    typealias Conn = OpaquePointer
    typealias Result = OpaquePointer

    let connectdbParams: @convention(c) (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<UnsafePointer<CChar>?>?, Int32) -> Conn?
    let status: @convention(c) (Conn?) -> Int32
    let errorMessage: @convention(c) (Conn?) -> UnsafeMutablePointer<CChar>?
    let finish: @convention(c) (Conn?) -> Void
    let reset: @convention(c) (Conn?) -> Void
    let exec: @convention(c) (Conn?, UnsafePointer<CChar>?) -> Result?
    let execParams: @convention(c) (Conn?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?,
                                    UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?
    let prepare: @convention(c) (Conn?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?) -> Result?
    let execPrepared: @convention(c) (Conn?, UnsafePointer<CChar>?, Int32, UnsafePointer<UnsafePointer<CChar>?>?,
                                      UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?
    let resultStatus: @convention(c) (Result?) -> Int32
    let resultErrorField: @convention(c) (Result?, Int32) -> UnsafeMutablePointer<CChar>?
    let resultErrorMessage: @convention(c) (Result?) -> UnsafeMutablePointer<CChar>?
    let clear: @convention(c) (Result?) -> Void
    let ntuples: @convention(c) (Result?) -> Int32
    let nfields: @convention(c) (Result?) -> Int32
    let getvalue: @convention(c) (Result?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    let getlength: @convention(c) (Result?, Int32, Int32) -> Int32
    let getisnull: @convention(c) (Result?, Int32, Int32) -> Int32
    let cmdTuples: @convention(c) (Result?) -> UnsafeMutablePointer<CChar>?
    let transactionStatus: @convention(c) (Conn?) -> Int32
    let serverVersion: @convention(c) (Conn?) -> Int32
    let consumeInput: @convention(c) (Conn?) -> Int32
    let notifies: @convention(c) (Conn?) -> UnsafeMutableRawPointer?
    let socket: @convention(c) (Conn?) -> Int32
    let freemem: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let escapeIdentifier: @convention(c) (Conn?, UnsafePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?
    let escapeLiteral: @convention(c) (Conn?, UnsafePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?
    let encryptPasswordConn: @convention(c) (Conn?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?
    let setNoticeProcessor: @convention(c) (Conn?, (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void)?,
                                            UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    let connectionNeedsPassword: @convention(c) (Conn?) -> Int32

    // ConnStatusType, ExecStatusType and PGTransactionStatusType values (libpq-fe.h).
    static let connectionOK: Int32 = 0
    static let commandOK: Int32 = 1
    static let tuplesOK: Int32 = 2
    static let transactionIdle: Int32 = 0
    /// PG_DIAG_SQLSTATE
    static let diagSQLState = Int32(UInt8(ascii: "C"))

    /// The library, loaded once; or why it could not be.
    static let shared: Swift.Result<LibPQ, NotesError> = load()

    static func loaded() throws -> LibPQ {
        switch shared {
        case .success(let lib): return lib
        case .failure(let error): throw error
        }
    }

    private static func load() -> Swift.Result<LibPQ, NotesError> {
        var handle: UnsafeMutableRawPointer?
        for name in ["libpq.so.5", "libpq.so"] {
            handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)
            if handle != nil { break }
        }
        guard let handle else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(NotesError(.storage, "a postgresql:// store needs PostgreSQL's client library, libpq (\(reason)); install it (Debian: apt-get install libpq5)", code: "libpq_missing"))
        }
        var missing: [String] = []
        func symbol<F>(_ name: String, as type: F.Type) -> F? {
            guard let pointer = dlsym(handle, name) else { missing.append(name); return nil }
            return unsafeBitCast(pointer, to: type)
        }
        guard
            let connectdbParams = symbol("PQconnectdbParams", as: (@convention(c) (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<UnsafePointer<CChar>?>?, Int32) -> Conn?).self),
            let status = symbol("PQstatus", as: (@convention(c) (Conn?) -> Int32).self),
            let errorMessage = symbol("PQerrorMessage", as: (@convention(c) (Conn?) -> UnsafeMutablePointer<CChar>?).self),
            let finish = symbol("PQfinish", as: (@convention(c) (Conn?) -> Void).self),
            let reset = symbol("PQreset", as: (@convention(c) (Conn?) -> Void).self),
            let exec = symbol("PQexec", as: (@convention(c) (Conn?, UnsafePointer<CChar>?) -> Result?).self),
            let execParams = symbol("PQexecParams", as: (@convention(c) (Conn?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?,
                                                                         UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?).self),
            let prepare = symbol("PQprepare", as: (@convention(c) (Conn?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?) -> Result?).self),
            let execPrepared = symbol("PQexecPrepared", as: (@convention(c) (Conn?, UnsafePointer<CChar>?, Int32, UnsafePointer<UnsafePointer<CChar>?>?,
                                                                             UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?).self),
            let resultStatus = symbol("PQresultStatus", as: (@convention(c) (Result?) -> Int32).self),
            let resultErrorField = symbol("PQresultErrorField", as: (@convention(c) (Result?, Int32) -> UnsafeMutablePointer<CChar>?).self),
            let resultErrorMessage = symbol("PQresultErrorMessage", as: (@convention(c) (Result?) -> UnsafeMutablePointer<CChar>?).self),
            let clear = symbol("PQclear", as: (@convention(c) (Result?) -> Void).self),
            let ntuples = symbol("PQntuples", as: (@convention(c) (Result?) -> Int32).self),
            let nfields = symbol("PQnfields", as: (@convention(c) (Result?) -> Int32).self),
            let getvalue = symbol("PQgetvalue", as: (@convention(c) (Result?, Int32, Int32) -> UnsafeMutablePointer<CChar>?).self),
            let getlength = symbol("PQgetlength", as: (@convention(c) (Result?, Int32, Int32) -> Int32).self),
            let getisnull = symbol("PQgetisnull", as: (@convention(c) (Result?, Int32, Int32) -> Int32).self),
            let cmdTuples = symbol("PQcmdTuples", as: (@convention(c) (Result?) -> UnsafeMutablePointer<CChar>?).self),
            let transactionStatus = symbol("PQtransactionStatus", as: (@convention(c) (Conn?) -> Int32).self),
            let serverVersion = symbol("PQserverVersion", as: (@convention(c) (Conn?) -> Int32).self),
            let consumeInput = symbol("PQconsumeInput", as: (@convention(c) (Conn?) -> Int32).self),
            let notifies = symbol("PQnotifies", as: (@convention(c) (Conn?) -> UnsafeMutableRawPointer?).self),
            let socket = symbol("PQsocket", as: (@convention(c) (Conn?) -> Int32).self),
            let freemem = symbol("PQfreemem", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
            let escapeIdentifier = symbol("PQescapeIdentifier", as: (@convention(c) (Conn?, UnsafePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?).self),
            let escapeLiteral = symbol("PQescapeLiteral", as: (@convention(c) (Conn?, UnsafePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?).self),
            let encryptPasswordConn = symbol("PQencryptPasswordConn", as: (@convention(c) (Conn?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?).self),
            let setNoticeProcessor = symbol("PQsetNoticeProcessor", as: (@convention(c) (Conn?, (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void)?,
                                                                                         UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?).self),
            let connectionNeedsPassword = symbol("PQconnectionNeedsPassword", as: (@convention(c) (Conn?) -> Int32).self)
        else {
            return .failure(NotesError(.storage, "the libpq found is too old for NotesKit (it lacks \(missing.joined(separator: ", "))); install libpq 10 or later", code: "libpq_missing"))
        }
        return .success(LibPQ(
            connectdbParams: connectdbParams, status: status, errorMessage: errorMessage, finish: finish, reset: reset,
            exec: exec, execParams: execParams, prepare: prepare, execPrepared: execPrepared, resultStatus: resultStatus,
            resultErrorField: resultErrorField, resultErrorMessage: resultErrorMessage, clear: clear, ntuples: ntuples,
            nfields: nfields, getvalue: getvalue, getlength: getlength, getisnull: getisnull, cmdTuples: cmdTuples,
            transactionStatus: transactionStatus, serverVersion: serverVersion, consumeInput: consumeInput,
            notifies: notifies, socket: socket, freemem: freemem, escapeIdentifier: escapeIdentifier,
            escapeLiteral: escapeLiteral, encryptPasswordConn: encryptPasswordConn,
            setNoticeProcessor: setNoticeProcessor, connectionNeedsPassword: connectionNeedsPassword))
    }
}
