import FoundationEssentials
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TensorIO / Net Runner model bundle: a `.tiobundle` (or the older `.tfbundle`) folder
/// holding `model.json`, the model file it names, and an optional `assets/` folder.
///
///     let bundle = try ModelBundle(path: "mobilenet_v2.tiobundle")
///     let classifier = try ImageClassifier(bundle: bundle)
///
/// Every file the description names must lie inside the bundle: `..`, absolute paths and
/// symbolic links pointing out are refused.
public struct ModelBundle: Equatable, Hashable, Sendable {
    /// The bundle folder.
    public let path: String
    /// The parsed `model.json`.
    public let description: ModelDescription

    /// The folder extensions TensorIO recognises.
    public static let extensions = ["tiobundle", "tfbundle"]

    /// Opens the bundle folder at `path` and validates its `model.json`.
    ///
    /// - Parameter path: The bundle folder.
    /// - Throws: ``ModelBundleError``: not a folder, no or bad `model.json`, a model file
    ///   missing or outside the bundle.
    public init(path: String) throws(ModelBundleError) {
        let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
        var info = stat()
        guard stat(folder, &info) == 0 else { throw .notABundle(path: folder, reason: "no such folder") }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .notABundle(path: folder, reason: "not a folder (a bundle is a folder with a model.json)")
        }
        let jsonPath = folder + "/model.json"
        guard let data = try? FileIO.contents(of: jsonPath) else {
            throw .notABundle(path: folder, reason: "it has no readable model.json (a regular file)")
        }
        let description = try ModelDescription.parse(data, source: jsonPath)
        self.path = folder
        self.description = description
        _ = try modelPath
        for layer in description.outputs {
            if let labels = layer.labels { _ = try assetPath(labels) }
        }
    }

    /// The absolute path of the model file, checked to lie inside the bundle.
    ///
    /// - Throws: ``ModelBundleError/missingFile(bundle:file:)``,
    ///   ``ModelBundleError/fileOutsideBundle(bundle:file:)``.
    public var modelPath: String {
        get throws(ModelBundleError) { try contained(description.model.file) }
    }

    /// The path of a file of the bundle's `assets/` folder (TensorIO's labels files), checked
    /// to lie inside the bundle.
    ///
    /// - Parameter name: The file name the description gives.
    /// - Returns: Its path.
    /// - Throws: ``ModelBundleError/missingFile(bundle:file:)``,
    ///   ``ModelBundleError/fileOutsideBundle(bundle:file:)``.
    public func assetPath(_ name: String) throws(ModelBundleError) -> String {
        try contained("assets/" + name)
    }

    /// Resolves a relative path inside the bundle, refusing anything that leaves it.
    private func contained(_ relative: String) throws(ModelBundleError) -> String {
        guard !relative.hasPrefix("/"), !relative.split(separator: "/").contains("..") else {
            throw .fileOutsideBundle(bundle: path, file: relative)
        }
        let candidate = path + "/" + relative
        guard let resolved = PathText.realPath(candidate) else { throw .missingFile(bundle: path, file: relative) }
        guard let root = PathText.realPath(path), resolved.hasPrefix(root + "/") else {
            throw .fileOutsideBundle(bundle: path, file: relative)
        }
        return resolved
    }

    /// Whether `path` looks like a bundle folder (by its extension or a `model.json` in it).
    ///
    /// - Parameter path: A path given as a model.
    /// - Returns: `true` for a folder holding `model.json`.
    public static func isBundle(_ path: String) -> Bool {
        var info = stat()
        let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return false }
        return access(folder + "/model.json", F_OK) == 0
    }
}

extension ModelBundle {
    /// The bundle whose `model.json` sits beside a model file and names it, if any: a bare
    /// `.tflite` given with its description next to it runs as that bundle.
    ///
    /// - Parameter modelPath: A `.tflite` file.
    /// - Returns: The bundle of its folder, when that folder's `model.json` names this file.
    public static func sibling(of modelPath: String) -> ModelBundle? {
        let folder =
            modelPath.contains("/") ? String(modelPath[..<(modelPath.lastIndex(of: "/") ?? modelPath.endIndex)]) : "."
        guard access(folder + "/model.json", F_OK) == 0, let bundle = try? ModelBundle(path: folder),
            let named = try? bundle.modelPath, let given = PathText.realPath(modelPath), named == given
        else { return nil }
        return bundle
    }
}
