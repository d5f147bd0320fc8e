#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Resident memory of this process, read from `/proc/self/status` (Linux).
enum ProcessMemory {
    /// Current resident set size in bytes (`VmRSS`), or `nil` where unavailable.
    static var residentBytes: Int? { field("VmRSS:") }

    /// Peak resident set size in bytes (`VmHWM`), or `nil` where unavailable.
    static var peakResidentBytes: Int? { field("VmHWM:") }

    private static func field(_ name: String) -> Int? {
        // /proc files report a size of 0: read until end of file.
        let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard got > 0 else { break }
            bytes += chunk[0..<got]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let kilobytes = line.dropFirst(name.count).split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
