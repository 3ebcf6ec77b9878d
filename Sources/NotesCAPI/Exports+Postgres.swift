import NotesKit

@_cdecl("nk_store_create_user")
public func nk_store_create_user(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?) -> Int32 {
    call {
        try store(handle).createUser(name: try string(name, "name"), password: try optionalString(password, "password"))
    }
}
