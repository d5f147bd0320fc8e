import ArgumentParser
import NetRunner
import TensorFlowLite

extension NetRunnerCommand {
    /// `netrunner bundle ...`: TensorIO / Net Runner model bundles.
    struct Bundle: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Work with TensorIO / Net Runner model bundles (.tiobundle, .tfbundle folders).",
            subcommands: [Validate.self])
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
                    let zipped = ZippedModelBundle.isZip(path) ? try ZippedModelBundle(zipAt: path) : nil
                    let bundle = try zipped?.bundle ?? ModelBundle(path: path)
                    let interpreter = try Interpreter(modelPath: try bundle.modelPath)
                    try interpreter.allocateTensors()
                    try bundle.check(against: interpreter)
                    if let labels = bundle.description.outputs.first?.labels {
                        let classes = try interpreter.output(at: 0).shape.dimensions.last
                        _ = try LabelMap(contentsOfFile: try bundle.assetPath(labels), classCount: classes)
                    }
                    let description = bundle.description
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
