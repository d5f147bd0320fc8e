// Access to the loaded LiteRT function table.
//
// Invariants: `LiteRT.api` is only read after `Runtime.load()` succeeded; the table it
// points to is immutable and lives for the whole process.

internal import CLiteRT

enum LiteRT {
    /// The function table; loads the runtime on first use.
    ///
    /// - Throws: `InterpreterError.tensorFlowLiteError` naming the install command when
    ///   the runtime cannot be found or loaded.
    static func api() throws(InterpreterError) -> UnsafePointer<NRLiteRtAPI> {
        if let table = nr_litert_api() { return table }
        do {
            try Runtime.load()
        } catch {
            throw InterpreterError.tensorFlowLiteError(error.description)
        }
        guard let table = nr_litert_api() else {
            throw InterpreterError.tensorFlowLiteError("The LiteRT runtime is not loaded.")
        }
        return table
    }

    /// Reads a C string the model owns, or `""` for NULL.
    static func string(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    /// The path the library was loaded from, or `nil` before it is loaded.
    static var loadedPath: String? {
        nr_litert_loaded_path().map { String(cString: $0) }
    }

    /// Whether the library is loaded.
    static var isLoaded: Bool { nr_litert_api() != nil }

    /// Opens the library at `path` (a bare name goes to the system's search path).
    ///
    /// - Parameter path: The library.
    /// - Returns: `nil` on success, else the loader's reason.
    static func load(_ path: String) -> String? {
        var message = [CChar](repeating: 0, count: 512)
        if nr_litert_load(path, &message, message.count) != nil { return nil }
        return Runtime.cString(message)
    }
}
