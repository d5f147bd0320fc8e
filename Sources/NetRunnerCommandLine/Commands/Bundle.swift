import ArgumentParser
import NetRunner
import TensorFlowLite

extension NetRunnerCommand {
    /// `netrunner bundle ...`: TensorIO / Net Runner model bundles.
    struct Bundle: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Work with TensorIO / Net Runner model bundles (.tiobundle, .tfbundle folders).",
            subcommands: [Create.self, Validate.self])
    }
}

extension NetRunnerCommand.Bundle {
    /// `netrunner bundle validate PATH...`: every problem of each bundle, or "valid".
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check bundles: model.json against TensorIO's format, its files, and the model itself.",
            discussion: "Prints every problem with its JSON path. Exits 0 when every bundle is valid, 1 otherwise.")

        @Argument(help: "Bundle folders, or zips of them.")
        var bundles: [String]

        func validate() throws {
            guard !bundles.isEmpty else { throw ValidationError("Name at least one bundle folder.") }
        }

        func run() throws {
            var invalid = 0
            for path in bundles {
                do {
                    // Loaded as every task loads it (a zip read in place): the description is
                    // checked against the model.
                    let model =
                        ZippedModelBundle.isZip(path)
                        ? try LoadedModel(.path(path)) : try LoadedModel(bundle: try ModelBundle(path: path))
                    guard let description = model.description else {
                        throw ModelBundleError.notABundle(path: path, reason: "it has no model.json")
                    }
                    // The same checks as running it: what `netrunner run` would make of it.
                    if let task = NetRunnerCommand.Run.task(of: model) {
                        var options = ImageTask.Options()
                        options.kind = task.kind
                        _ = try ImageTask(model: model, options: options)
                    } else {
                        _ = try Model(model: model)
                    }
                    Console.print(
                        "valid    \(path): \"\(description.name)\" (id \(description.id), version \(description.version)), "
                            + "\(description.inputs.count) input(s), \(description.outputs.count) output(s)")
                } catch let error as ModelBundleError {
                    invalid += 1
                    switch error {
                    case .invalidDescription(let file, let problems), .descriptionMismatch(let file, let problems):
                        Console.print("invalid  \(path): \(file), \(problems.count) problem(s):")
                        for problem in problems { Console.print("  \(problem)") }
                    default:
                        Console.print("invalid  \(path): \(error)")
                    }
                } catch {
                    invalid += 1
                    Console.print("invalid  \(path): \(error)")
                }
            }
            if invalid > 0 { throw ExitCode.failure }
        }
    }
}

extension NetRunnerCommand.Bundle {
    /// `netrunner bundle create MODEL --output DIR`: a TensorIO bundle for a `.tflite` model.
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write a TensorIO / Net Runner bundle for a .tflite model, filled from its metadata where it has some.",
            discussion:
                "The bundle is written beside OUTPUT and renamed into place; an existing OUTPUT is never replaced.")

        @Argument(help: "The .tflite model.")
        var model: String

        @Option(name: .shortAndLong, help: "The bundle folder to create (name.tiobundle).")
        var output: String

        @Option(
            name: .shortAndLong, help: "A labels file for the first output (default: the labels packed in the model).")
        var labels: String?

        @Option(
            parsing: .unconditional,
            help: "The image input's normalisation: [0,1], [-1,1] or SCALE,BIAS (default: the metadata's, else [0,1]).")
        var normalize: String?

        @Option(
            help:
                "The model type, such as image.classification.imagenet, image.pose.movenet or image.segmentation.deeplab."
        )
        var type: String?

        func run() throws {
            var transform: ModelDescription.Transform?
            switch normalize {
            case nil: transform = nil
            case "[0,1]": transform = .init(scale: 1 / 255, bias: [0, 0, 0], standard: "[0,1]")
            case "[-1,1]": transform = .init(scale: 2 / 255, bias: [-1, -1, -1], standard: "[-1,1]")
            case let text?:
                let parts = text.split(separator: ",").compactMap { Float($0.trimmingWhitespaceForCLI()) }
                guard parts.count == 2, parts[0] != 0, parts.allSatisfy(\.isFinite) else {
                    throw ValidationError("--normalize must be [0,1], [-1,1] or SCALE,BIAS, found \(text).")
                }
                transform = .init(scale: parts[0], bias: [parts[1], parts[1], parts[1]])
            }
            let bundle = try ModelBundle.create(
                at: output, modelPath: model, labelsPath: labels, normalization: transform, type: type)
            Console.print("created  \(bundle.path): \"\(bundle.description.name)\" (id \(bundle.description.id))")
        }
    }
}

extension Substring {
    /// The text without surrounding spaces.
    fileprivate func trimmingWhitespaceForCLI() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
