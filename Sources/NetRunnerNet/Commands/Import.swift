import ArgumentParser
import NetRunner
import NetRunnerCommandLine
import NetRunnerHub

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension NetRunnerNetCommand {
    /// `netrunner import URL|FILE`: Net Runner's import of a model by URL, into a models folder.
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a model by URL or path into a models folder, validated, for evaluate and serve.",
            discussion: """
                Takes an http(s) URL or a path to a zipped bundle (.tiobundle.zip, .tfbundle.zip), a bundle folder \
                or a .tflite model. Downloads it (with a progress bar on a terminal), checks --sha256 if given, \
                unpacks it (one bundle, no paths outside it, at most 1 GiB), validates it as `bundle validate` does \
                (the description, the model in a child process, an image task it runs as), then installs it into \
                --models with one rename: the folder holds the old model or the new one, never half of either. \
                A model whose id is already installed is refused unless --replace is given. URLs that lead to \
                loopback, private or link-local addresses (directly, by name or by a redirect) are refused unless \
                --allow-private-imports is given (a model on your own network), as `serve` refuses them.

                  netrunner import https://example.org/flowers.tiobundle.zip
                  netrunner evaluate --models Models TestBundles/imagenet.testbundle
                """)

        @Argument(help: "An http(s) URL, or the path of a zipped bundle, a bundle folder or a .tflite model.")
        var source: String

        @Option(help: "The models folder to install into, made if missing (\(ModelsFolder.precedence)).")
        var models: String?

        @Option(help: "The SHA-256 the file must have (64 hex digits); a mismatch installs nothing.")
        var sha256: String?

        @Flag(help: "Replace an installed model with the same id.")
        var replace = false

        @Flag(
            name: .customLong("allow-private-imports"),
            help: "Let the URL lead to loopback, private and link-local addresses (a server on your own network).")
        var allowsPrivateImports = false

        @OptionGroup var modelMemory: ModelMemoryOption

        func run() async throws {
            modelMemory.apply()
            let importer = ModelImporter(
                modelsFolder: try ModelsFolder.importTarget(flag: models), allowsPrivateAddresses: allowsPrivateImports)
            let meter = DownloadMeter()
            let (source, sha256, replace) = (self.source, self.sha256, self.replace)
            let model: ImportedModel
            do {
                model = try await importer.importModel(from: source, sha256: sha256, replace: replace) {
                    meter.show($0)
                }
            } catch {
                meter.finish()
                throw error
            }
            meter.finish()
            let kind = VisionTaskRegistry.definition(for: model.kind)?.modelName ?? model.kind.rawValue
            Console.print(
                "\(model.replaced ? "replaced" : "imported") \(model.id) (\"\(model.name)\", \(kind)) into \(model.path)"
            )
            Console.print("  sha256 \(model.sha256), \(model.byteCount) bytes")
        }
    }
}

/// The import's progress on a terminal: bytes received, then each step.
private final class DownloadMeter: Sendable {
    private let meter = ByteMeter()

    func show(_ progress: ImportProgress) {
        switch progress {
        case .downloading(let received, let total): meter.bytes("downloading", received: received, total: total)
        case .unpacking: meter.step("unpacking")
        case .validating: meter.step("validating (the model runs once in a child process)")
        case .installing: meter.step("installing")
        }
    }

    func finish() { meter.finish() }
}
