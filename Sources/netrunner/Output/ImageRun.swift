import ArgumentParser
import NetRunner
import Synchronization

/// Runs one task over image files, as `classify` and `detect` do: every core busy
/// (``BulkInference``), answers printed in file order, failures reported per file.
enum ImageRun {
    /// Runs the task on every file and prints each outcome.
    ///
    /// - Parameters:
    ///   - files: The image files.
    ///   - threads: The threads (see ``ModelOptions/threads``).
    ///   - json: Whether errors are printed as JSON lines.
    ///   - makeTask: Makes the task for one thread, with the runtime thread count given.
    ///   - print: Prints one image's answer.
    /// - Throws: The task's loading errors; `ExitCode.failure` when any image failed.
    static func run(
        files: [String], threads: Int, json: Bool,
        makeTask: @Sendable (_ threadCount: Int) throws -> ImageTask,
        print: @Sendable (_ file: String, _ answer: ImageAnswer) throws -> Void
    ) throws {
        let failures = Atomic<Int>(0)
        try BulkInference.run(
            files: files, threads: threads, makeTask: makeTask,
            deliver: { index, outcome in
                do {
                    try print(files[index], try outcome.get())
                } catch {
                    failures.add(1, ordering: .relaxed)
                    ClassificationOutput.printError(error, file: files[index], json: json)
                }
            })
        let failed = failures.load(ordering: .relaxed)
        if failed > 0 {
            Console.diagnostic("\(failed) of \(files.count) images failed.")
            throw ExitCode.failure
        }
    }
}
