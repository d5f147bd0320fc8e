#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The check child's scheduling priority: a server's checks run below its requests.
///
/// The parent asks for a nice value in ``nicenessEnvironmentVariable`` of the child's
/// environment; the child raises its own nice value to it first thing, before the runtime is
/// loaded and before any thread starts (Linux's nice value is per thread, and threads inherit
/// their creator's), and says in its answer what it ran at (``Report/niceness``). A child
/// only ever lowers its priority: a value below the one it inherited is ignored (raising
/// priority takes a privilege, and no request should need one).
extension ModelCheck {
    /// The environment variable in which the parent asks the check child for a nice value
    /// (0-19).
    public static let nicenessEnvironmentVariable = "NETRUNNER_CHECK_NICENESS"

    /// The highest nice value there is.
    static let maximumNiceness: Int32 = 19

    /// The `NAME=VALUE` entries the child's environment gets for `niceness`: none for 0 or less
    /// (the child inherits this process's), else the value, at most ``maximumNiceness``.
    static func nicenessEnvironment(_ niceness: Int32) -> [String] {
        niceness > 0 ? ["\(nicenessEnvironmentVariable)=\(min(niceness, maximumNiceness))"] : []
    }

    /// In the child: raises this process's nice value to the one its environment asks for, if
    /// higher; returns the nice value it runs at.
    ///
    /// A value that is not a whole number from 0 to 19 is ignored (the request still runs).
    static func lowerOwnPriority() -> Int32 {
        let current = currentNiceness()
        guard let text = Runtime.environment(nicenessEnvironmentVariable), text.count <= 3,
            let asked = Int32(text), (0...maximumNiceness).contains(asked), asked > current
        else { return current }
        #if canImport(Glibc)
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
        #else
            let which = PRIO_PROCESS
        #endif
        _ = setpriority(which, 0, asked)
        return currentNiceness()
    }

    /// This thread's nice value (`getpriority(PRIO_PROCESS, 0)`; -1 is a valid value, so errno
    /// tells an error, read as 0).
    static func currentNiceness() -> Int32 {
        #if canImport(Glibc)
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
        #else
            let which = PRIO_PROCESS
        #endif
        errno = 0
        let value = getpriority(which, 0)
        return errno == 0 ? value : 0
    }

    /// The memory and the nice value in an accepted child's answer, `memory BYTES nice N`
    /// (`nice N` absent from a checker built before it was reported).
    static func parseAcceptedAnswer(_ answer: String) -> (memory: Int?, niceness: Int32?) {
        let words = answer.split(separator: " ")
        var memory: Int?
        var niceness: Int32?
        var index = 0
        while index + 1 < words.count {
            switch words[index] {
            case "memory": memory = Int(words[index + 1]).map { max($0, 0) }
            case "nice": niceness = Int32(words[index + 1]).flatMap { (-20...19).contains($0) ? $0 : nil }
            default: break
            }
            index += 2
        }
        return (memory, niceness)
    }
}
