#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `stat(2)` says of a path, for modules that also see SwiftNIO's C modules: there, which
/// module `struct stat` belongs to depends on how the compiler batches the files, and a call of
/// `stat()` may not compile (MemberImportVisibility); this module imports no NIO.
package struct FileStatus: Sendable, Equatable {
    /// Whether it is a regular file (links followed).
    package let isRegularFile: Bool
    /// Its size in bytes.
    package let size: Int

    /// The status of `path`, or `nil` when `stat(2)` fails (no such file...).
    ///
    /// - Parameter path: The path.
    package init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        isRegularFile = status.st_mode & S_IFMT == S_IFREG
        size = Int(status.st_size)
    }
}
