// The one place where LiteRT status codes are compared and turned into Swift errors.
//
// Invariants: every status a C call returns goes through `check(_:_:)` (or `succeeded(_:)`
// where a failure is not an error), which names the call and keeps unknown codes as
// numbers, so distinct failures never collapse. No other file compares a status value.

internal import CLiteRT

/// A LiteRT status code, by the names `CLiteRT.h` gives LiteRT's values.
struct LiteRTStatus: Equatable, Hashable, CustomStringConvertible {
    /// The number the runtime returned.
    let rawValue: NRLiteRtStatus

    init(_ rawValue: NRLiteRtStatus) { self.rawValue = rawValue }

    private init(named value: Int) { self.rawValue = NRLiteRtStatus(value) }

    static let ok = Self(named: NRLiteRtStatusOk)
    static let invalidArgument = Self(named: NRLiteRtStatusInvalidArgument)
    static let memoryAllocationFailure = Self(named: NRLiteRtStatusMemoryAllocationFailure)
    static let runtimeFailure = Self(named: NRLiteRtStatusRuntimeFailure)
    static let missingInputTensor = Self(named: NRLiteRtStatusMissingInputTensor)
    static let unsupported = Self(named: NRLiteRtStatusUnsupported)
    static let notFound = Self(named: NRLiteRtStatusNotFound)
    static let timeoutExpired = Self(named: NRLiteRtStatusTimeoutExpired)
    static let wrongVersion = Self(named: NRLiteRtStatusWrongVersion)
    static let unknown = Self(named: NRLiteRtStatusUnknown)
    static let alreadyExists = Self(named: NRLiteRtStatusAlreadyExists)
    static let fileIO = Self(named: NRLiteRtStatusFileIO)
    static let invalidFlatbuffer = Self(named: NRLiteRtStatusInvalidFlatbuffer)
    static let dynamicLoading = Self(named: NRLiteRtStatusDynamicLoading)
    static let serialization = Self(named: NRLiteRtStatusSerialization)
    static let compilation = Self(named: NRLiteRtStatusCompilation)
    static let indexOutOfBounds = Self(named: NRLiteRtStatusIndexOOB)
    static let invalidIrType = Self(named: NRLiteRtStatusInvalidIrType)
    static let invalidGraphInvariant = Self(named: NRLiteRtStatusInvalidGraphInvariant)
    static let graphModification = Self(named: NRLiteRtStatusGraphModification)

    /// Whether the call succeeded.
    var isSuccess: Bool { self == .ok }

    /// Whether the runtime's flatbuffer verifier refused the model's bytes.
    var isInvalidFlatbuffer: Bool { self == .invalidFlatbuffer }

    /// The name used in error messages (`InvalidFlatbuffer`, ...), or `status N` for a
    /// code this table does not know.
    var description: String {
        switch self {
        case .ok: "Ok"
        case .invalidArgument: "InvalidArgument"
        case .memoryAllocationFailure: "MemoryAllocationFailure"
        case .runtimeFailure: "RuntimeFailure"
        case .missingInputTensor: "MissingInputTensor"
        case .unsupported: "Unsupported"
        case .notFound: "NotFound"
        case .timeoutExpired: "Timeout"
        case .wrongVersion: "WrongVersion"
        case .unknown: "Unknown"
        case .alreadyExists: "AlreadyExists"
        case .fileIO: "FileIO"
        case .invalidFlatbuffer: "InvalidFlatbuffer"
        case .dynamicLoading: "DynamicLoading"
        case .serialization: "Serialization"
        // The name this code had in the headers of the 2.x releases NetRunner was written against.
        case .compilation: "CompilerPluginLoadFailed"
        case .indexOutOfBounds: "IndexOOB"
        case .invalidIrType: "InvalidIrType"
        case .invalidGraphInvariant: "InvalidGraphInvariant"
        case .graphModification: "GraphModification"
        default: "status \(rawValue)"
        }
    }
}

/// A failed LiteRT C call: which function, and the status it returned.
struct LiteRTCallError: Error, CustomStringConvertible {
    let function: String
    let status: LiteRTStatus
    /// Text the runtime wrote to stderr while the call ran, if any was captured.
    var runtimeLog: String = ""

    init(function: String, status: LiteRTStatus, runtimeLog: String = "") {
        self.function = function
        self.status = status
        self.runtimeLog = runtimeLog
    }

    /// The status name from the runtime's header (`InvalidFlatbuffer`, ...), or the number.
    var statusName: String { status.description }

    var description: String {
        let log = runtimeLog.isEmpty ? "" : " (\(runtimeLog))"
        return "\(function) failed with status \(statusName)\(log)"
    }
}

/// Whether a status a C call returned is success; for calls whose failure is an answer
/// ("no such entry") rather than an error.
@inline(__always)
func succeeded(_ status: NRLiteRtStatus) -> Bool {
    LiteRTStatus(status).isSuccess
}

/// Throws `LiteRTCallError` unless `status` is success.
@inline(__always)
func check(_ status: NRLiteRtStatus, _ function: @autoclosure () -> String) throws(LiteRTCallError) {
    guard succeeded(status) else {
        throw LiteRTCallError(function: function(), status: LiteRTStatus(status))
    }
}
