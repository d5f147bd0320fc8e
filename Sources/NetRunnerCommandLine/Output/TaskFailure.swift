/// An error of one image's job, carried across threads as its message.
struct TaskFailure: Error, Sendable, CustomStringConvertible {
    var message: String

    var description: String { message }
}
