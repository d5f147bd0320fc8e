import ArgumentParser
import NetRunner
import NetRunnerEngine
import NetRunnerSupport

/// The models folder whose ids `--model` takes, and what set it: `--models`, else
/// `NETRUNNER_MODELS`, else `models` in the settings file, else `./Models` when it is a folder.
///
/// The models installed with NetRunner (``ModelCatalog/installedFolder``) are read after it in
/// every case, so their ids work from any folder.
package struct ModelsFolder: Equatable, Sendable {
    /// The folder.
    package var path: String
    /// What set it: `--models`, `NETRUNNER_MODELS=`, `"models" of FILE`, or `the default`.
    package var setting: String

    /// Where the folder comes from without the flag, for help texts.
    package static let precedence =
        "default: NETRUNNER_MODELS, else \"models\" in ~/.config/netrunner/config.json, else ./Models if it exists"

    /// The help text every `--models` flag that looks ids up shares.
    package static let help = precedence + "; the models installed with NetRunner are found after it"

    /// The folder a command reads: the flag, the environment, the settings file, the default.
    ///
    /// - Parameters:
    ///   - flag: `--models`, if given.
    ///   - mustExist: Whether a folder the environment or the file names must be one already
    ///     (an import makes it).
    /// - Returns: The folder and its setting, or `nil` when none is set and `./Models` is not a
    ///   folder.
    /// - Throws: `ValidationError` when the settings file cannot be used, or when the
    ///   environment or the file names a folder that is not one (a flag's folder is checked
    ///   where it is read, with that flag's own message).
    package static func resolve(flag: String?, mustExist: Bool = true) throws -> ModelsFolder? {
        if let flag { return ModelsFolder(path: flag, setting: "--models") }
        let found: (value: String, source: UserSettings.Source)?
        do {
            found = try UserSettings.value(.models)
        } catch {
            throw ValidationError(error.description)
        }
        if let found {
            let setting: String
            switch found.source {
            case .environment(let name): setting = name + "="
            case .file(let path): setting = "\"models\" of \(path):"
            }
            guard !mustExist || ImageFiles.isDirectory(found.value) else {
                throw ValidationError(
                    "\(setting)\(setting.hasSuffix("=") ? "" : " ")\(found.value) is not a folder of models. "
                        + "Make it (mkdir), or set another folder, or unset it to use ./Models.")
            }
            return ModelsFolder(path: found.value, setting: setting)
        }
        let standard = ModelCatalog.defaultFolder
        return ImageFiles.isDirectory(standard) ? ModelsFolder(path: standard, setting: "the default") : nil
    }

    /// The folder imports write to: the resolved folder (made by the import if missing), else
    /// `./Models`.
    ///
    /// - Parameter flag: `--models`, if given.
    /// - Returns: The folder.
    /// - Throws: The errors of ``resolve(flag:mustExist:)``.
    package static func importTarget(flag: String?) throws -> String {
        try resolve(flag: flag, mustExist: false)?.path ?? ModelCatalog.defaultFolder
    }
}
