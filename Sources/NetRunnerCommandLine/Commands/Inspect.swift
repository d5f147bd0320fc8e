import ArgumentParser
import NetRunner
import TensorFlowLite

extension NetRunnerCommand {
    /// `netrunner inspect MODEL`: signatures, inputs and outputs of a model.
    struct Inspect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a model's signatures, inputs and outputs (names, types, shapes, quantization).")

        @Argument(help: "A .tflite model file, a bundle folder, or a zipped bundle.")
        var model: String

        @Flag(name: .long, help: "Print JSON instead of text.")
        var json = false

        @OptionGroup var hardware: AcceleratorOptions

        struct Report: Codable {
            var model: String
            var bytes: Int
            var runtime: String
            /// What the model was compiled for: `cpu` or `gpu`.
            var accelerator: String
            /// Whether every operator runs there (LiteRT 2.3 tells no more than this).
            var fullyAccelerated: Bool
            var inputs: [TensorReport]
            var outputs: [TensorReport]
            var signatures: [Signature]
            var metadata: Metadata?
        }

        struct Metadata: Codable {
            var name: String?
            var version: String?
            var author: String?
            var license: String?
            var inputs: [String]
            var outputs: [String]
        }

        struct Signature: Codable {
            var key: String
            var inputs: [TensorReport]
            var outputs: [TensorReport]
        }

        func run() async throws {
            // Read as every command reads --model: a bundle's description first, then its model.
            let loaded = try LoadedModel(.path(await HubReference.localPath(model)))
            let modelPath = loaded.modelFile
            if let description = loaded.description, !json {
                Console.print("Bundle: \(loaded.bundlePath ?? model)")
                Console.print(
                    "  \"\(description.name)\" id \(description.id), version \(description.version), "
                        + "type \(description.model.type ?? "-"), quantized \(description.model.quantized)")
                for (group, layers) in [("input", description.inputs), ("output", description.outputs)] {
                    for layer in layers {
                        var text = "  \(group) \"\(layer.name)\" \(layer.kind.rawValue) \(layer.shape)"
                        if let format = layer.format { text += " \(format)" }
                        if let normalize = layer.normalize {
                            text +=
                                " normalize \(normalize.standard ?? "scale \(normalize.scale) bias \(normalize.bias)")"
                        }
                        if let labels = layer.labels { text += " labels \(labels)" }
                        Console.print(text)
                    }
                }
            }
            // Not checked against the description: inspect shows a mismatching bundle too.
            try ModelGate.admit(loaded)
            var options = Interpreter.Options()
            options.accelerator = hardware.choice
            let interpreter = try Interpreter(modelData: loaded.modelData, source: modelPath, options: options)
            AcceleratorNotice.note(requested: hardware.choice, fallbackReason: interpreter.acceleratorFallbackReason)
            try interpreter.allocateTensors()
            let inputs = try (0..<interpreter.inputTensorCount).map {
                TensorReport(index: $0, tensor: try interpreter.input(at: $0))
            }
            let outputs = try (0..<interpreter.outputTensorCount).map {
                TensorReport(index: $0, tensor: try interpreter.output(at: $0))
            }
            var signatures: [Signature] = []
            for key in interpreter.signatureKeys {
                let runner = try interpreter.signatureRunner(with: key)
                signatures.append(
                    Signature(
                        key: key,
                        inputs: try runner.inputs.enumerated().map {
                            TensorReport(
                                index: $0.offset, tensor: try runner.input(named: $0.element),
                                nameInSignature: $0.element)
                        },
                        outputs: try runner.outputs.enumerated().map {
                            TensorReport(
                                index: $0.offset, tensor: try runner.output(named: $0.element),
                                nameInSignature: $0.element)
                        }))
            }
            let metadata = loaded.metadata.map { parsed in
                func describe(_ tensor: TFLiteMetadata.TensorMetadata) -> String {
                    var text = "\"\(tensor.name ?? "")\" \(tensor.content)"
                    if let normalization = tensor.normalization {
                        text += " normalised (x - \(normalization.mean)) / \(normalization.std)"
                    }
                    if !tensor.associatedFiles.isEmpty {
                        text +=
                            " files "
                            + tensor.associatedFiles.map {
                                "\($0.name) (\($0.type)\($0.locale.map { ", \($0)" } ?? ""))"
                            }
                            .joined(separator: ", ")
                    }
                    return text
                }
                return Metadata(
                    name: parsed.name, version: parsed.version, author: parsed.author, license: parsed.license,
                    inputs: parsed.inputs.map(describe), outputs: parsed.outputs.map(describe))
            }
            let report = Report(
                model: model, bytes: interpreter.modelSizeInBytes,
                runtime: "LiteRT \(Runtime.version) (\(Runtime.loadedPath ?? "?"))",
                accelerator: interpreter.accelerator.rawValue, fullyAccelerated: interpreter.isFullyAccelerated,
                inputs: inputs, outputs: outputs, signatures: signatures, metadata: metadata)
            if json {
                try Console.printJSON(report)
                return
            }
            Console.print("Model: \(modelPath) (\(Console.megabytes(report.bytes)) MB)")
            Console.print("Runtime: \(report.runtime)")
            Console.print(
                "Accelerator: \(report.accelerator)"
                    + (report.accelerator == "cpu"
                        ? " (XNNPACK)"
                        : report.fullyAccelerated
                            ? ", every operator on the GPU" : ", some operators on the CPU between GPU parts"))
            Console.print("Inputs (interpreter order):")
            for tensor in inputs { Console.print("  " + tensor.line) }
            Console.print("Outputs (interpreter order):")
            for tensor in outputs { Console.print("  " + tensor.line) }
            if let metadata {
                Console.print(
                    "Metadata: \"\(metadata.name ?? "")\" version \(metadata.version ?? "-"), author \(metadata.author ?? "-")"
                )
                Console.print("  license: \(metadata.license ?? "-")")
                for input in metadata.inputs { Console.print("  input " + input) }
                for output in metadata.outputs { Console.print("  output " + output) }
            } else {
                Console.print("Metadata: none")
            }
            Console.print("Signatures: \(signatures.count)")
            for signature in signatures {
                Console.print("  \"\(signature.key)\"")
                Console.print("    inputs:")
                for tensor in signature.inputs { Console.print("      " + tensor.line) }
                Console.print("    outputs:")
                for tensor in signature.outputs { Console.print("      " + tensor.line) }
            }
        }
    }
}
