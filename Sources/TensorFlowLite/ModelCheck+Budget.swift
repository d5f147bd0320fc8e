#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The check's memory budget: what a model may declare, and the address space its child gets.
///
/// Before the child starts, the parent sums the tensors the model's file declares (every
/// subgraph's tensors without a constant buffer, shape times element size) and refuses a model
/// that declares more than the budget, or more than can be counted, without allocating
/// anything. The child then limits its own address space (`RLIMIT_AS`), first thing after the
/// runtime is loaded and before the model is read, to what it holds then plus the budget plus
/// the runtime's own needs (``addressSpaceAllowance(threads:modelBytes:)``), so that an
/// allocation past it fails in the child, which reports a refusal.
extension ModelCheck {
    /// The budget of a check given none: the machine's physical memory, in bytes.
    ///
    /// A model declaring more tensors than the machine has is refused before anything is
    /// allocated, rather than when the allocation fails or the kernel's OOM killer acts.
    public static var defaultMemoryBudget: Int {
        let pages = Int(sysconf(Int32(_SC_PHYS_PAGES)))
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let (bytes, overflow) = max(pages, 0).multipliedReportingOverflow(by: max(pageSize, 0))
        return overflow || bytes <= 0 ? 1 << 40 : bytes
    }

    /// The runtime's own address space beyond the budget: the libraries' and XNNPACK's
    /// reservations (128 MiB), a thread's stack and arena per thread (16 MiB each), and three
    /// times the model file (the bytes read, the runtime's copy, XNNPACK's packed weights).
    ///
    /// Measured with the committed models in `Models/` (debug build, one thread): each needs
    /// 99-143 MiB of address space in all, 40-85 MiB above what the child holds with the runtime
    /// loaded; eight threads add 56 MiB.
    ///
    /// - Parameters:
    ///   - threads: The interpreter's threads (counted as 1 to 1,024).
    ///   - modelBytes: The model file's size.
    /// - Returns: Bytes, at most `Int.max / 4`.
    static func addressSpaceAllowance(threads: Int, modelBytes: Int) -> Int {
        let ceiling = Int.max / 4
        let perThread = min(max(threads, 1), 1024) << 24
        let (weights, overflow) = max(modelBytes, 0).multipliedReportingOverflow(by: 3)
        guard !overflow, weights < ceiling else { return ceiling }
        return min((128 << 20) + perThread + weights, ceiling)
    }

    /// Why the model at `modelPath` is refused for the tensors its file declares, or `nil`
    /// when it is within `budget` (or cannot be read, which the child then reports).
    static func declaredTensorRefusal(modelPath: String, budget: Int, budgetGiven: Bool) -> String? {
        guard let bytes = try? ModelFile.read(modelPath) else { return nil }
        let allowed = "the check allows \(describe(budget))" + (budgetGiven ? "" : " (the machine's memory)")
        switch DeclaredTensors.sum(UnsafeRawBufferPointer(start: bytes.base, count: bytes.count)) {
        case .unreadable:
            return nil
        case .overflow:
            return "\(modelPath) declares more bytes of tensors than can be counted; \(allowed)"
        case .bytes(let declared):
            return declared > budget ? "\(modelPath) declares \(describe(declared)) of tensors; \(allowed)" : nil
        }
    }

    /// The bytes the tensors of the model file at `modelPath` declare, read from the file
    /// without loading the model.
    ///
    /// - Parameter modelPath: A `.tflite` file.
    /// - Returns: The bytes, or `nil` when they overflow `Int` or the file's flatbuffer
    ///   cannot be read that far.
    /// - Throws: ``InterpreterError/failedToLoadModel(reason:)`` when the file cannot be read.
    public static func declaredTensorBytes(modelPath: String) throws -> Int? {
        let bytes = try ModelFile.read(modelPath)
        guard
            case .bytes(let declared) = DeclaredTensors.sum(
                UnsafeRawBufferPointer(start: bytes.base, count: bytes.count))
        else { return nil }
        return declared
    }

    /// Limits this process's address space to what it maps now plus `budget` plus
    /// ``addressSpaceAllowance(threads:modelBytes:)``; returns the limit set, or `nil` when none
    /// could be (no `/proc`, or `setrlimit` refused).
    static func limitAddressSpace(budget: Int, threads: Int, modelPath: String) -> Int? {
        var info = stat()
        let modelBytes = stat(modelPath, &info) == 0 ? Int(info.st_size) : 0
        guard let mapped = statusBytes("VmSize:"), mapped > 0 else { return nil }
        let allowance = addressSpaceAllowance(threads: threads, modelBytes: modelBytes)
        let (withBudget, overflow1) = mapped.addingReportingOverflow(max(budget, 0))
        let (total, overflow2) = withBudget.addingReportingOverflow(allowance)
        guard !overflow1, !overflow2 else { return nil }
        var limit = rlimit(rlim_cur: rlim_t(total), rlim_max: rlim_t(total))
        #if os(Linux)
            guard setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0 else { return nil }
        #else
            guard setrlimit(RLIMIT_AS, &limit) == 0 else { return nil }
        #endif
        return total
    }

    /// A field of `/proc/self/status` given in kB (`VmSize:`, `VmHWM:`), in bytes; `nil`
    /// where there is none.
    static func statusBytes(_ field: String) -> Int? {
        #if os(Linux)
            let file = open("/proc/self/status", O_RDONLY)
            guard file >= 0 else { return nil }
            defer { close(file) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            for line in String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n")
            where line.hasPrefix(field) {
                guard let kilobytes = Int(line.dropFirst(field.count).filter(\.isNumber)) else { return nil }
                let (bytes, overflow) = kilobytes.multipliedReportingOverflow(by: 1024)
                return overflow ? nil : bytes
            }
            return nil
        #else
            return nil
        #endif
    }

    /// Bytes as MiB (rounded up), or GiB to one decimal from 1 GiB up.
    static func describe(_ bytes: Int) -> String {
        if bytes >= 1 << 30 {
            let tenths = bytes / ((1 << 30) / 10)
            return "\(tenths / 10).\(tenths % 10) GiB"
        }
        return "\((bytes >> 20) + (bytes & ((1 << 20) - 1) == 0 ? 0 : 1)) MiB"
    }
}
