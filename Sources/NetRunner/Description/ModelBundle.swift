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
/// Every file the description names, and `model.json` itself, must lie inside the bundle:
/// `..`, absolute paths and symbolic links pointing out are refused (``ContainedFolder``'s
/// check, as `hub push`, `import` and `evaluate` make it); links that stay inside work.
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
    ///   missing or outside the bundle, a link that leads out of it.
    public init(path: String) throws(ModelBundleError) {
        let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
        var info = stat()
        guard stat(folder, &info) == 0 else { throw .notABundle(path: folder, reason: "no such folder") }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .notABundle(path: folder, reason: "not a folder (a bundle is a folder with a model.json)")
        }
        let jsonPath = folder + "/model.json"
        let data: Data
        do throws(ContainedFolder.Refusal) {
            data = try ContainedFolder(folder, name: "the bundle folder").contents(of: "model.json")
        } catch .linkOutside(let link, let target, let kind, _) {
            throw .linkOutsideBundle(bundle: folder, link: link, target: target + (kind.map { " (\($0))" } ?? ""))
        } catch {
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
    ///   ``ModelBundleError/fileOutsideBundle(bundle:file:)``,
    ///   ``ModelBundleError/linkOutsideBundle(bundle:link:target:)``.
    public var modelPath: String {
        get throws(ModelBundleError) { try contained(description.model.file) }
    }

    /// The path of a file of the bundle's `assets/` folder (TensorIO's labels files), checked
    /// to lie inside the bundle.
    ///
    /// - Parameter name: The file name the description gives.
    /// - Returns: Its path.
    /// - Throws: ``ModelBundleError/missingFile(bundle:file:)``,
    ///   ``ModelBundleError/fileOutsideBundle(bundle:file:)``,
    ///   ``ModelBundleError/linkOutsideBundle(bundle:link:target:)``.
    public func assetPath(_ name: String) throws(ModelBundleError) -> String {
        try contained("assets/" + name)
    }

    /// Resolves a relative path inside the bundle, refusing anything that leaves it.
    private func contained(_ relative: String) throws(ModelBundleError) -> String {
        do throws(ContainedFolder.Refusal) {
            return try ContainedFolder(path, name: "the bundle folder").resolve(relative)
        } catch .linkOutside(let link, let target, let kind, _) {
            throw .linkOutsideBundle(bundle: path, link: link, target: target + (kind.map { " (\($0))" } ?? ""))
        } catch .outside {
            throw .fileOutsideBundle(bundle: path, file: relative)
        } catch {
            throw .missingFile(bundle: path, file: relative)
        }
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
