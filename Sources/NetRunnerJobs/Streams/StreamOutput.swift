package import NetRunner
package import NetRunnerImage

/// Where a ``StreamSession`` hands its answers, in order (the command line prints them).
///
/// An error thrown here (a closed stdout) ends the session with that error.
package protocol StreamOutput: Sendable {
    /// A frame's answer.
    ///
    /// - Parameter answer: The answer, with its frame and when it came.
    /// - Throws: What stops the session (the output cannot be written).
    func answered(_ answer: FrameAnswer) throws

    /// A frame the model could not answer.
    ///
    /// - Parameters:
    ///   - frame: The frame.
    ///   - problem: Why.
    /// - Throws: What stops the session (the output cannot be written).
    func failed(_ frame: VideoFrame, problem: String) throws
}
