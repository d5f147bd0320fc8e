import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The models a command names by id, as `serve` and `evaluate` name them: the embedded
/// models (by their `model.json` id, and by `mobilenet`, `face` and `blazeface`), then every
/// model of the models folder (bundles by their `model.json` id, `.tflite` files by file name,
/// imports included), the first of an id winning.
///
/// `--model` and `--compare` take a path (an existing file or folder wins), `hub:NAME[@REF]`,
/// or one of these ids.
struct ModelCatalog {
    /// One model of the catalog.
    struct Entry {
        /// The id `--model` takes.
        var id: String
        /// The embedded model's task, or `nil` for a model of the folder.
        var embedded: ImageTask.Kind?
        /// The model's path in the folder, or `nil` for an embedded model.
        var path: String?

        /// Where the model comes from: `embedded`, or its path.
        var origin: String { path ?? "embedded" }
    }

    /// The models folder `--model` looks in without `--models`.
    static let defaultFolder = "Models"

    /// The short names of the embedded models, besides their ids.
    static let embeddedNames: [String: ImageTask.Kind] = [
        "mobilenet": .classification, "face": .detection, "blazeface": .detection,
    ]

    /// The models folder read, or `nil` when there is none.
    let folder: String?
    /// The models, embedded first, then the folder's by id.
    let entries: [Entry]
    /// Bundles of the folder that could not be read, with why.
    let unreadable: [String: String]

    /// Reads the catalog.
    ///
    /// - Parameter folder: `--models`, else ``defaultFolder`` when it is a folder.
    /// - Throws: `ValidationError` when `--models` is given and is not a folder.
    init(folder: String?) throws {
        var entries: [Entry] = []
        for kind in [ImageTask.Kind.classification, .detection] {
            let source = try EmbeddedModels.source(for: kind)
            if case .bundleData(_, _, let description?, _) = source {
                entries.append(Entry(id: description.id, embedded: kind, path: nil))
            }
        }
        let folder = folder ?? (ImageArguments.isDirectory(Self.defaultFolder) ? Self.defaultFolder : nil)
        var unreadable: [String: String] = [:]
        if let folder {
            guard ImageArguments.isDirectory(folder) else {
                throw ValidationError("--models \(folder) is not a folder of models.")
            }
            let directory = try ModelDirectory(path: folder)
            unreadable = directory.unreadable
            for (id, path) in directory.models.sorted(by: { $0.key < $1.key })
            where !entries.contains(where: { $0.id == id }) {
                entries.append(Entry(id: id, embedded: nil, path: path))
            }
        }
        self.folder = folder
        self.entries = entries
        self.unreadable = unreadable
    }

    /// The model an id or short name names, or `nil`.
    ///
    /// - Parameter id: The id (exact), or a short name of an embedded model (any case).
    /// - Returns: The entry.
    func entry(_ id: String) -> Entry? {
        if let found = entries.first(where: { $0.id == id }) { return found }
        if let kind = Self.embeddedNames[id.lowercased()] {
            return entries.first { $0.embedded == kind }
        }
        return nil
    }

    /// The one message for a name that is no path and no id: the ids there are, the closest
    /// first.
    ///
    /// - Parameters:
    ///   - name: What was given.
    ///   - flag: The flag that gave it (`--model`, `--compare`).
    /// - Returns: The message.
    func unknownMessage(_ name: String, flag: String) -> String {
        var ids = entries.map(\.id) + Self.embeddedNames.keys.sorted()
        let closest = closestMatch(to: name, in: ids)
        if let closest {
            ids.removeAll { $0 == closest }
            ids.insert(closest, at: 0)
        }
        var message = "\(flag) \(name): no such file, and no model has that id"
        if let closest { message += " (did you mean \(closest)?)" }
        message += ". The ids (embedded, and \(folder.map { "the models folder \($0)" } ?? "no models folder"))"
        message += ": \(ids.joined(separator: ", ")); or give a path, or hub:NAME[@VERSION|@ALIAS]."
        if !unreadable.isEmpty {
            message += " Unreadable bundles: \(unreadable.keys.sorted().joined(separator: ", "))."
        }
        return message
    }

    /// Whether a file or folder exists at `path` (a path is taken before an id).
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
