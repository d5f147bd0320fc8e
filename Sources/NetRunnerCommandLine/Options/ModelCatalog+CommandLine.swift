import ArgumentParser
import NetRunner
package import NetRunnerEngine

extension ModelCatalog {
    /// The catalog the command line names models from: this executable's embedded models and
    /// `--models` (else `Models/` when it is a folder).
    ///
    /// - Parameter folder: `--models`.
    /// - Returns: The catalog.
    /// - Throws: `ValidationError` when `--models` is not a folder.
    package static func commandLine(folder: String?) throws -> ModelCatalog {
        let embedded = try EmbeddedModels.kinds.map { ($0, try EmbeddedModels.source(for: $0)) }
        do {
            return try ModelCatalog(embedded: embedded, folder: folder)
        } catch let error as ModelCatalog.FolderError {
            throw ValidationError(error.description)
        }
    }
}
