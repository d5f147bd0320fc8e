import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A folder of models found by id, as Net Runner's models directory.
///
/// Every TensorIO bundle under it by its `model.json` id (folders, and zipped bundles `*.zip`),
/// every `.tflite` file outside a bundle by its file name without the extension. Hidden files
/// and folders (a name starting with `.`, such as an import in progress) are skipped.
///
///     let models = try ModelDirectory(path: "Models")
///     let path = try models.path(forModel: "mobilenet-v2-1.0-224-uint8", in: "imagenet.testbundle/test.json")
public struct ModelDirectory: Sendable {
    /// The folder.
    public let path: String
    /// Model ids and the path of each model.
    public private(set) var models: [String: String] = [:]
    /// Bundles under the folder whose `model.json` could not be read, with why.
    public private(set) var unreadable: [String: String] = [:]

    /// Finds the models under a folder (searched recursively; bundles are not searched inside).
    ///
    /// - Parameter path: The folder.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` when it is not a folder.
    public init(path: String) throws(NetRunnerError) {
        let base = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        self.path = base
        var info = stat()
        guard stat(base, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw .invalidOption(name: "models folder", reason: "\(base) is not a folder")
        }
        let entries = ((try? FileManager.default.subpathsOfDirectory(atPath: base)) ?? []).sorted()
        var bundles: [String] = []
        for entry in entries {
            let full = base + "/" + entry
            if entry.hasPrefix(".") || entry.contains("/.") { continue }
            if bundles.contains(where: { entry.hasPrefix($0 + "/") }) { continue }
            if ModelBundle.isBundle(full) {
                bundles.append(entry)
                do {
                    let bundle = try ModelBundle(path: full)
                    if models[bundle.description.id] == nil { models[bundle.description.id] = full }
                } catch {
                    unreadable[full] = "\(error)"
                }
            } else if entry.lowercased().hasSuffix(".zip") && ZippedModelBundle.isZip(full) {
                do {
                    let model = try LoadedModel(.path(full))
                    if let id = model.description?.id, models[id] == nil { models[id] = full }
                } catch {
                    unreadable[full] = "\(error)"
                }
            } else if entry.lowercased().hasSuffix(".tflite") {
                let id = Self.id(ofFile: entry)
                if models[id] == nil { models[id] = full }
            }
        }
    }

    /// Adds another folder's models under the ids this one lacks (the installed models after the
    /// user's folder).
    ///
    /// - Parameter other: The other folder's models.
    package mutating func addModels(of other: ModelDirectory) {
        models.merge(other.models) { mine, _ in mine }
        unreadable.merge(other.unreadable) { mine, _ in mine }
    }

    /// The id of a model given by path: a bundle's `model.json` id, else the file's name
    /// without its extension (as `.tflite` files in a models folder are found).
    ///
    /// - Parameter path: A bundle folder, zipped bundle or `.tflite` file.
    /// - Returns: The id.
    public static func id(ofModelAt path: String) -> String {
        if let description = (try? LoadedModel(.path(path)))?.description { return description.id }
        return id(ofFile: path)
    }

    package static func id(ofFile path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot > name.startIndex else { return name }
        return String(name[..<dot])
    }
}
