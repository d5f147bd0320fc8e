public import FoundationEssentials

extension Interpreter {
    /// Reads a model file into memory with the checks ``init(modelPath:options:delegates:)``
    /// makes before the runtime sees it (a regular file, at most 2 GiB, the `TFL3` identifier),
    /// so a caller can read a model once and create several interpreters from the bytes.
    ///
    ///     let bytes = try Interpreter.modelData(contentsOf: "model.tflite")
    ///     let interpreter = try Interpreter(modelData: bytes, source: "model.tflite")
    ///
    /// - Parameter path: The `.tflite` file.
    /// - Returns: The file's bytes.
    /// - Throws: ``InterpreterError/failedToLoadModel(reason:)`` naming the file and the problem.
    public static func modelData(contentsOf path: String) throws(InterpreterError) -> Data {
        let memory = try ModelFile.read(path)
        return Data(bytes: memory.base, count: memory.count)
    }

    /// Creates an interpreter for a model held in memory, naming it in errors as `source`
    /// (the file it was read from, for example).
    ///
    /// - Parameters:
    ///   - modelData: The bytes of a `.tflite` model; copied, so they may be released at once.
    ///   - source: The name errors give the model, such as its path.
    ///   - options: Thread count and logging; `nil` runs single-threaded.
    ///   - delegates: Must be `nil` or empty: LiteRT runs on the CPU here.
    /// - Throws: The errors of ``init(modelPath:options:delegates:)``, naming `source`.
    public convenience init(
        modelData: Data, source: String, options: Options? = nil, delegates: [any Delegate]? = nil
    ) throws {
        try Self.checkDelegates(delegates)
        let copy = modelData.withUnsafeBytes { AlignedMemory(copying: $0) }
        guard let copy else {
            throw InterpreterError.failedToLoadModel(
                reason: "\(source): not enough memory to copy \(modelData.count) bytes.")
        }
        try ModelFile.validateHeader(copy, source: source)
        try self.init(bytes: copy, source: source, options: options, delegates: delegates)
    }
}
