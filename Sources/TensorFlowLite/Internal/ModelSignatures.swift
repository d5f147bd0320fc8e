// Reads a loaded model's signatures and their tensors through the LiteRT C API.
//
// Invariants: the C strings and tensor handles read here belong to the model and are
// copied into Swift values before the model can be released.

internal import CLiteRT

/// What the model says about one input or output tensor, before any resize.
struct TensorInfo: Equatable {
    var name: String
    /// The TfLiteType number of the element type.
    var elementType: Int32
    /// The shape from the model; -1 marks a dynamic dimension.
    var shapeSignature: [Int]
    var quantization: Tensor.Quantization
}

/// One signature: its key, its tensors in the order `RunCompiledModel` takes them, and
/// the permutation from the classic interpreter's order to that order.
struct SignatureInfo {
    var key: String
    var index: Int
    var inputs: [TensorInfo]
    var outputs: [TensorInfo]
    /// The names the signature gives its inputs and outputs (may differ from tensor names).
    var inputNames: [String]
    var outputNames: [String]
    /// `classicInputOrder[i]` is the signature index of the interpreter's input `i`.
    var classicInputOrder: [Int]
    var classicOutputOrder: [Int]
    var isMain: Bool
}

enum ModelSignatures {
    /// Reads every signature of `model`.
    ///
    /// Throws a `LiteRTCallError` when a call fails, a `ModelIntegrityError` when the model
    /// leaves out a name the runtime would later dereference.
    static func read(_ model: ModelHandle) throws -> [SignatureInfo] {
        let api = model.environment.api.pointee
        var count = 0
        try check(api.GetNumModelSignatures(model.raw, &count), "LiteRtGetNumModelSignatures")
        var mainIndex = 0
        try check(api.GetMainModelSubgraphIndex(model.raw, &mainIndex), "LiteRtGetMainModelSubgraphIndex")
        var mainSubgraph: NRLiteRtSubgraph?
        try check(api.GetModelSubgraph(model.raw, mainIndex, &mainSubgraph), "LiteRtGetModelSubgraph")

        var signatures: [SignatureInfo] = []
        for index in 0..<count {
            var signature: NRLiteRtSignature?
            try check(api.GetModelSignature(model.raw, index, &signature), "LiteRtGetModelSignature")
            guard let signature else { throw LiteRTCallError(function: "LiteRtGetModelSignature", status: .notFound) }
            var key: UnsafePointer<CChar>?
            try check(api.GetSignatureKey(signature, &key), "LiteRtGetSignatureKey")
            _ = try requiredName(key, "signature \(index) key")
            var subgraph: NRLiteRtSubgraph?
            try check(api.GetSignatureSubgraph(signature, &subgraph), "LiteRtGetSignatureSubgraph")

            var inputCount = 0
            var outputCount = 0
            try check(api.GetNumSignatureInputs(signature, &inputCount), "LiteRtGetNumSignatureInputs")
            try check(api.GetNumSignatureOutputs(signature, &outputCount), "LiteRtGetNumSignatureOutputs")
            let (inputNames, inputHandles, inputs) = try tensors(
                of: signature, count: inputCount, api: api, index: index, outputs: false)
            let (outputNames, outputHandles, outputs) = try tensors(
                of: signature, count: outputCount, api: api, index: index, outputs: true)
            // The classic interpreter orders tensors as the subgraph lists them.
            var inputOrder = Array(0..<inputCount)
            var outputOrder = Array(0..<outputCount)
            if let subgraph {
                if let order = try classicOrder(subgraph, handles: inputHandles, api: api, outputs: false) {
                    inputOrder = order
                }
                if let order = try classicOrder(subgraph, handles: outputHandles, api: api, outputs: true) {
                    outputOrder = order
                }
            }
            signatures.append(
                SignatureInfo(
                    key: LiteRT.string(key), index: index, inputs: inputs, outputs: outputs,
                    inputNames: inputNames, outputNames: outputNames,
                    classicInputOrder: inputOrder, classicOutputOrder: outputOrder,
                    isMain: subgraph != nil && subgraph == mainSubgraph))
        }
        if !signatures.isEmpty && !signatures.contains(where: \.isMain) {
            signatures[0].isMain = true
        }
        return signatures
    }

    /// The names the signature gives its inputs (or outputs), their tensors' handles, and
    /// what the model says of each tensor.
    private static func tensors(
        of signature: NRLiteRtSignature, count: Int, api: NRLiteRtAPI, index: Int, outputs: Bool
    ) throws -> (names: [String], handles: [NRLiteRtTensor?], infos: [TensorInfo]) {
        var names: [String] = []
        var handles: [NRLiteRtTensor?] = []
        var infos: [TensorInfo] = []
        for i in 0..<count {
            var name: UnsafePointer<CChar>?
            var tensor: NRLiteRtTensor?
            if outputs {
                try check(api.GetSignatureOutputName(signature, i, &name), "LiteRtGetSignatureOutputName")
                try check(
                    api.GetSignatureOutputTensorByIndex(signature, i, &tensor), "LiteRtGetSignatureOutputTensorByIndex")
            } else {
                try check(api.GetSignatureInputName(signature, i, &name), "LiteRtGetSignatureInputName")
                try check(
                    api.GetSignatureInputTensorByIndex(signature, i, &tensor), "LiteRtGetSignatureInputTensorByIndex")
            }
            names.append(try requiredName(name, "signature \(index) \(outputs ? "output" : "input") \(i)"))
            handles.append(tensor)
            infos.append(try info(of: tensor, api: api))
        }
        return (names, handles, infos)
    }

    /// The signature indices of the subgraph's inputs (or outputs), in subgraph order, or
    /// `nil` when the two lists do not hold the same tensors.
    private static func classicOrder(
        _ subgraph: NRLiteRtSubgraph, handles: [NRLiteRtTensor?], api: NRLiteRtAPI, outputs: Bool
    ) throws -> [Int]? {
        var count = 0
        if outputs {
            try check(api.GetNumSubgraphOutputs(subgraph, &count), "LiteRtGetNumSubgraphOutputs")
        } else {
            try check(api.GetNumSubgraphInputs(subgraph, &count), "LiteRtGetNumSubgraphInputs")
        }
        guard count == handles.count else { return nil }
        var order: [Int] = []
        for i in 0..<count {
            var tensor: NRLiteRtTensor?
            if outputs {
                try check(api.GetSubgraphOutput(subgraph, i, &tensor), "LiteRtGetSubgraphOutput")
            } else {
                try check(api.GetSubgraphInput(subgraph, i, &tensor), "LiteRtGetSubgraphInput")
            }
            guard let position = handles.firstIndex(where: { $0 == tensor }) else { return nil }
            order.append(position)
        }
        return Set(order).count == order.count ? order : nil
    }

    private static func info(of tensor: NRLiteRtTensor?, api: NRLiteRtAPI) throws -> TensorInfo {
        guard let tensor else { throw LiteRTCallError(function: "LiteRtGetSignatureTensor", status: .notFound) }
        var name: UnsafePointer<CChar>?
        try check(api.GetTensorName(tensor, &name), "LiteRtGetTensorName")
        _ = try requiredName(name, "a signature tensor")
        var typeId: Int32 = 0
        try check(api.GetTensorTypeId(tensor, &typeId), "LiteRtGetTensorTypeId")
        guard typeId == Int32(NRLiteRtRankedTensorTypeId) else {
            // Unranked I/O tensors cannot be given host buffers of a known size.
            throw LiteRTCallError(
                function: "LiteRtGetRankedTensorType (unranked tensor \(LiteRT.string(name)))", status: .unsupported)
        }
        var ranked = NRLiteRtRankedTensorType()
        try check(api.GetRankedTensorType(tensor, &ranked), "LiteRtGetRankedTensorType")
        let shape = dimensions(of: ranked.layout)

        var quantizationType: Int32 = 0
        try check(api.GetQuantizationTypeId(tensor, &quantizationType), "LiteRtGetQuantizationTypeId")
        var quantization = Tensor.Quantization.none
        switch quantizationType {
        case Int32(NRLiteRtQuantizationPerTensorId):
            var params = NRLiteRtQuantizationPerTensor()
            try check(api.GetPerTensorQuantization(tensor, &params), "LiteRtGetPerTensorQuantization")
            if params.scale != 0 {
                quantization = .perTensor(
                    QuantizationParameters(scale: params.scale, zeroPoint: Int(params.zero_point)))
            }
        case Int32(NRLiteRtQuantizationPerChannelId):
            var params = NRLiteRtQuantizationPerChannel()
            try check(api.GetPerChannelQuantization(tensor, &params), "LiteRtGetPerChannelQuantization")
            let channels = Int(clamping: params.num_channels)
            var scales: [Float] = []
            var zeroPoints: [Int] = []
            if let pointer = params.scales, channels > 0 {
                scales = Array(UnsafeBufferPointer(start: pointer, count: channels))
            }
            if let pointer = params.zero_points, channels > 0 {
                zeroPoints = UnsafeBufferPointer(start: pointer, count: channels).map { Int($0) }
            }
            quantization = .perChannel(
                PerChannelQuantizationParameters(
                    scales: scales, zeroPoints: zeroPoints, quantizedDimension: Int(params.quantized_dimension)))
        default:
            break
        }
        return TensorInfo(
            name: LiteRT.string(name), elementType: ranked.element_type, shapeSignature: shape,
            quantization: quantization)
    }

    /// The string, or an error when the model left it out.
    ///
    /// The flatbuffer verifier accepts
    /// missing names, but the runtime later builds `std::string`s from them and aborts.
    private static func requiredName(_ pointer: UnsafePointer<CChar>?, _ what: String) throws -> String {
        guard let pointer else { throw ModelIntegrityError(problem: "\(what) has no name") }
        return String(cString: pointer)
    }

    /// The dimensions a layout holds (rank is the low 7 bits of the first word).
    static func dimensions(of layout: NRLiteRtLayout) -> [Int] {
        let rank = min(Int(layout.rank_and_flags & 0x7f), Int(NR_LITERT_TENSOR_MAX_RANK))
        return withUnsafeBytes(of: layout.dimensions) { raw in
            raw.bindMemory(to: Int32.self).prefix(rank).map { Int($0) }
        }
    }
}
