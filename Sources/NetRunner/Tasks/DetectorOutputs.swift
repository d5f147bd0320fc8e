import TensorFlowLite

/// Which output tensor of a detector holds what, resolved by name and shape, never by
/// position alone (converters list the four SSD outputs in different orders).
enum DetectorOutputs: Equatable {
    /// `TFLite_Detection_PostProcess` outputs: boxes [1, N, 4] (ymin, xmin, ymax, xmax,
    /// normalised), classes [1, N], scores [1, N], count [1].
    case ssd(boxes: Int, classes: Int, scores: Int, count: Int)
    /// Raw per-anchor outputs (BlazeFace): regressors [1, N, 4 + 2k], scores [1, N, 1].
    case anchors(regressors: Int, scores: Int, anchorCount: Int, coordinates: Int)

    /// Resolves the outputs of an allocated interpreter.
    ///
    /// - Parameters:
    ///   - outputs: The output tensors, in the interpreter's order.
    ///   - metadataNames: The names the model's TFLite metadata gives the outputs (the Task
    ///     Library's `location`, `category`, `score`, `number of detections`), if any.
    ///   - model: The model's name, for errors.
    /// - Returns: Which output holds what.
    /// - Throws: ``NetRunnerError/unsupportedOutputs(model:reason:)`` when they cannot be told apart.
    static func resolve(
        _ outputs: [Tensor], metadataNames: [String?] = [], model: String
    ) throws(NetRunnerError) -> DetectorOutputs {
        let shapes = outputs.map(\.shape.dimensions)
        if outputs.count == 2 {
            // Raw anchors: one [1, N, >= 4] regression tensor and one [1, N, 1] score tensor.
            let candidates = shapes.indices.filter { shapes[$0].count == 3 && shapes[$0][0] == 1 }
            if candidates.count == 2,
                let regressors = candidates.first(where: { shapes[$0][2] >= 4 && shapes[$0][2] % 2 == 0 }),
                let scores = candidates.first(where: { $0 != regressors && shapes[$0][2] == 1 }),
                shapes[regressors][1] == shapes[scores][1], outputs.allSatisfy({ $0.dataType == .float32 })
            {
                return .anchors(
                    regressors: regressors, scores: scores, anchorCount: shapes[regressors][1],
                    coordinates: shapes[regressors][2])
            }
        }
        guard outputs.count == 4 else {
            throw .unsupportedOutputs(
                model: model,
                reason:
                    "a detector has 4 outputs (boxes, classes, scores, count) or 2 raw anchor outputs; found \(outputs.count)"
            )
        }
        func named(_ words: [String]) -> Int? {
            // The metadata's names first, then the tensors' own.
            for source in [metadataNames.map { $0?.lowercased() ?? "" }, outputs.map { $0.name.lowercased() }] {
                guard source.count == outputs.count else { continue }
                let matches = source.indices.filter { index in words.contains { source[index].contains($0) } }
                if matches.count == 1 { return matches[0] }
            }
            return nil
        }
        // TFLite_Detection_PostProcess names its outputs "…", ":1", ":2", ":3".
        func postProcess(_ suffix: String) -> Int? {
            outputs.indices.first { outputs[$0].name.hasSuffix("TFLite_Detection_PostProcess\(suffix)") }
        }
        let boxes =
            named(["box", "location"]) ?? postProcess("")
            ?? shapes.indices.first { shapes[$0].count == 3 && shapes[$0].last == 4 }
        let count =
            named(["count", "num", "number"]) ?? postProcess(":3")
            ?? shapes.indices.first { shapes[$0].reduce(1, *) == 1 }
        let rest = outputs.indices.filter { $0 != boxes && $0 != count }
        let classes = named(["class", "categor"]) ?? postProcess(":1") ?? rest.first
        let scores = named(["score"]) ?? postProcess(":2") ?? rest.first { $0 != classes }
        guard let boxes, let classes, let scores, let count, Set([boxes, classes, scores, count]).count == 4 else {
            throw .unsupportedOutputs(
                model: model, reason: "cannot tell the boxes, classes, scores and count outputs apart")
        }
        let n = shapes[boxes].count == 3 ? shapes[boxes][1] : -1
        guard shapes[boxes].last == 4, shapes[classes].last == n, shapes[scores].last == n else {
            throw .unsupportedOutputs(
                model: model,
                reason:
                    "boxes \(outputs[boxes].shape), classes \(outputs[classes].shape) and scores \(outputs[scores].shape) do not agree"
            )
        }
        return .ssd(boxes: boxes, classes: classes, scores: scores, count: count)
    }
}
