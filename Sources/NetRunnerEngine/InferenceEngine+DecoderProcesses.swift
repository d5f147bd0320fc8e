import FoundationEssentials
import NetRunner
import NetRunnerImage

extension InferenceEngine {
    /// `input` decoded now, in a decoder process and awaited without a worker, when it is an
    /// encoded photo of a format the engine's decoder processes take
    /// (``InferenceEngine/Configuration/decoding``) and the model's decoding
    /// options are known (it has warmed up); else `input` as it is, for the worker to decode.
    ///
    /// A worker then only prepares and runs the decoded photo: a HEIC whose decoder hangs holds
    /// a decoder process until its deadline, never one of the workers every model shares.
    ///
    /// - Parameters:
    ///   - input: The request's image.
    ///   - id: The model's id.
    /// - Returns: The image for the worker.
    /// - Throws: ``EngineError/badInput(_:)`` for a photo the decoder process refused or failed on.
    func decodedAhead(_ input: ImageInput, for id: String) async throws(EngineError) -> ImageInput {
        guard case .data(let data) = input, let options = details(of: id)?.decodingOptions else { return input }
        let start = ContinuousClock.now
        guard let decoded = try await decodedAhead(data, options: options, source: "image data") else { return input }
        return .decoded(decoded, decodeTime: ContinuousClock.now - start)
    }

    /// `data` decoded in a decoder process with `options`, awaited without a worker; `nil` when
    /// no decoder process takes its format.
    ///
    /// - Parameters:
    ///   - data: The encoded photo.
    ///   - options: How to decode it.
    ///   - source: The name errors give it.
    /// - Returns: The decoded photo, or `nil`.
    /// - Throws: ``EngineError/badInput(_:)``.
    func decodedAhead(_ data: Data, options: DecodingOptions, source: String) async throws(EngineError)
        -> DecodedImage?
    {
        do {
            return try await ImageDecoder.$environment.withValue(configuration.decoding) {
                try await ImageDecoder.decodeInDecoderProcess(data: data, options: options, source: source)
            }
        } catch {
            throw .badInput("\(error)")
        }
    }
}
