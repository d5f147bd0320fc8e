/// A value a task's answer option does not take; the message names the values it does.
public struct TaskAnswerOptionError: Error, Sendable, CustomStringConvertible {
    /// The message (`mask must be model (...) or image (...), not "full".`).
    public var description: String
}
