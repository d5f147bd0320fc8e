import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerEngine
import NetRunnerImage
import NetRunnerSupport

extension NetRunnerCommand {
    /// `netrunner imprint FOLDER --output BUNDLE`: a classifier for new classes from a few
    /// photos of each, by weight imprinting.
    struct Imprint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a classifier for new classes from a few photos of each (weight imprinting).",
            discussion: """
                FOLDER holds a folder per class, named as the class, with a few photos each (searched \
                recursively). Each photo is embedded by --model (default: the installed embedder, Coral's MobileNet \
                V1 embedding extractor); each class's weights are the normalised mean of its photos' normalised \
                embeddings, as Coral's imprinting engine makes them. The output is a bundle: the extractor's \
                .tflite with L2_NORMALIZATION, FULLY_CONNECTED and SOFTMAX appended (a plain TFLite model: \
                Python's ai_edge_litert, `classify`, the hub and phones run it; its TFLite metadata names the \
                classes for MediaPipe's ImageClassifier), its labels and model.json. It is written whole or not at \
                all; an existing bundle is replaced only with --replace.
                """)

        @Argument(help: "A folder holding one folder of photos per class.")
        var folder: String

        @Option(name: .shortAndLong, help: "The bundle folder to create (pets.tiobundle).")
        var output: String

        @OptionGroup var model: RequiredModelOptions

        @Option(
            help:
                "What the cosines are multiplied by before the softmax (the paper's scale: higher, surer scores), 1 to 100."
        )
        var scale: Double = Double(WeightImprinting.defaultScale)

        @Flag(help: "Replace the bundle at --output if there is one (the new one is written whole first).")
        var replace = false

        func validate() throws {
            guard scale.isFinite, (1...100).contains(scale) else {
                throw ValidationError("--scale \(scale) is not between 1 and 100.")
            }
        }

        func run() async throws {
            let classFolders = try Self.classFolders(in: folder)
            guard !classFolders.isEmpty else {
                throw ValidationError("\(folder) holds no folder: make a folder per class, each with its photos.")
            }
            // Before any photo is embedded: a name the labels cannot carry fails now, not after.
            for (name, path) in classFolders {
                do {
                    try WeightImprinting.checkClassName(name)
                } catch NetRunnerError.invalidOption(_, let reason) {
                    throw ValidationError("The class folder \(path): \(reason); rename the folder.")
                }
            }
            let loaded = try await model.load(defaultFor: .embedding)
            var options = ImageEmbedder.Options()
            options.baseOptions = model.baseOptions
            let embedder = try ImageEmbedder(model: loaded, options: options)
            var classes: [(name: String, embeddings: [[Float]])] = []
            var failed = 0
            for (name, path) in classFolders {
                let photos = ImageFiles.listing(of: [path]).files
                var embeddings: [[Float]] = []
                for photo in photos {
                    do {
                        embeddings.append(try embedder.run(.file(photo)).embedding)
                    } catch let error as ImageError {
                        failed += 1
                        Console.diagnostic("\(photo): \(error); left out.")
                    }
                }
                guard !embeddings.isEmpty else {
                    throw ValidationError("The class \(name) (\(path)) has no photo that could be read.")
                }
                classes.append((name, embeddings))
            }
            // The extractor as model.json names it, to be found from anywhere: an id (the default
            // embedder's without --model) or hub: as given, a path made absolute.
            let typed = model.model ?? (ModelCatalog.installedDefaults[.embedding] ?? loaded.name)
            let extractorName =
                ModelCatalog.exists(typed) && !HubReference.isHubModel(typed) ? RecordedPaths.absolute(typed) : typed
            let bundle: ModelBundle
            do {
                bundle = try WeightImprinting.writeClassifier(
                    extractor: loaded, classes: classes, scale: Float(scale), extractorName: extractorName,
                    replacing: replace, to: output)
            } catch ModelBundleError.alreadyExists(let path) {
                Console.diagnostic(
                    "Error: \(path) already exists; nothing was written. Give --replace to replace it, or name "
                        + "a new bundle folder.")
                throw ExitCode.failure
            }
            let counts = classes.map { "\($0.name) \($0.embeddings.count)" }.joined(separator: ", ")
            Console.print(
                "imprinted \(classes.count) classes (\(counts) photos) on \(extractorName) into \(bundle.path)"
                    + (failed > 0 ? "; \(failed) photos could not be read" : ""))
        }

        /// The folders directly under `folder` (hidden ones left out), by name.
        static func classFolders(in folder: String) throws -> [(name: String, path: String)] {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: folder)
            } catch {
                throw ValidationError("Cannot read the folder \(folder): \(error)")
            }
            return names.sorted().compactMap { name in
                let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
                guard !name.hasPrefix("."), ImageFiles.isDirectory(path) else { return nil }
                return (name, path)
            }
        }
    }
}
