// The one place where LiteRT status codes are compared and turned into Swift errors.
//
// Invariants: every C call that returns a status goes through `check(_:_:)`, which names
// the call and keeps unknown codes as numbers, so distinct failures never collapse.

internal import CLiteRT

/// A failed LiteRT C call: which function, and the status it returned.
struct LiteRTCallError: Error, CustomStringConvertible {
    let function: String
    let status: Int32
    /// Text the runtime wrote to stderr while the call ran, if any was captured.
    var runtimeLog: String = ""

    /// The status name from the runtime's header (`InvalidFlatbuffer`, ...), or the number.
    var statusName: String { Self.name(of: status) }

    var description: String {
        let log = runtimeLog.isEmpty ? "" : " (\(runtimeLog))"
        return "\(function) failed with status \(statusName)\(log)"
    }

    static func name(of status: Int32) -> String {
        switch status {
        case 0: "Ok"
        case 1: "InvalidArgument"
        case 2: "MemoryAllocationFailure"
        case 3: "RuntimeFailure"
        case 4: "MissingInputTensor"
        case 5: "Unsupported"
        case 6: "NotFound"
        case 7: "Timeout"
        case 8: "WrongVersion"
        case 9: "Unknown"
        case 10: "AlreadyExists"
        case 500: "FileIO"
        case 501: "InvalidFlatbuffer"
        case 502: "DynamicLoading"
        case 503: "Serialization"
        case 504: "CompilerPluginLoadFailed"
        case 1000: "IndexOOB"
        case 1001: "InvalidIrType"
        case 1002: "InvalidGraphInvariant"
        case 1003: "GraphModification"
        default: "status \(status)"
        }
    }
}

/// Throws `LiteRTCallError` unless `status` is success.
@inline(__always)
func check(_ status: NRLiteRtStatus, _ function: @autoclosure () -> String) throws(LiteRTCallError) {
    guard status == 0 else {
        throw LiteRTCallError(function: function(), status: status)
    }
}
