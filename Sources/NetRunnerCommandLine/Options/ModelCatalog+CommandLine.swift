import ArgumentParser
import NetRunner
package import NetRunnerEngine

extension ModelCatalog {
    /// The catalog the command line names models from: this executable's embedded models, the
    /// models folder (``ModelsFolder/resolve(flag:)``: `--models`, `NETRUNNER_MODELS`, the
    /// settings file, `./Models`), then the models installed with NetRunner.
    ///
    /// - Parameters:
    ///   - folder: `--models`.
    ///   - includesInstalled: Whether the installed models are read (`serve` reads them only
    ///     with `--installed-models`: each of its workers holds every model it serves).
    /// - Returns: The catalog.
    /// - Throws: `ValidationError` when the folder is not a folder, or the settings file cannot be
    ///   used.
    package static func commandLine(folder: String?, includesInstalled: Bool = true) throws -> ModelCatalog {
        let embedded = try EmbeddedModels.kinds.map { ($0, try EmbeddedModels.source(for: $0)) }
        let resolved = try ModelsFolder.resolve(flag: folder)
        do {
            return try ModelCatalog(
                embedded: embedded, folder: resolved?.path, installed: includesInstalled ? installedFolder : nil)
        } catch var error as ModelCatalog.FolderError {
            error.setting = resolved?.setting ?? error.setting
            throw ValidationError(error.description)
        }
    }
}
