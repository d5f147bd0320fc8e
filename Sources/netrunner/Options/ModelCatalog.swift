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

    /// The entries to show or serve: one per network.
    ///
    /// A model whose bytes another entry already has is left out in favour of the one that says most about itself: a bundle
    /// (`model.json`, labels), then an embedded model, then a `.tflite` file. The ids left out
    /// still resolve with `--model`.
    ///
    /// - Returns: The entries kept, in catalog order, each with the ids of its copies.
    func distinct() -> [(entry: Entry, copies: [String])] {
        let digests = entries.map { entry -> String? in
            if let kind = entry.embedded { return (try? LoadedModel(EmbeddedModels.source(for: kind)))?.sha256 }
            return entry.path.flatMap { try? LoadedModel(.path($0)) }?.sha256
        }
        let kept = Self.onePerNetwork(
            entries.indices.map {
                (digest: digests[$0], rank: Self.rank(embedded: entries[$0].embedded != nil, path: entries[$0].path))
            })
        return kept.map { (entries[$0.index], $0.copies.map { entries[$0].id }) }
    }

    /// How much a model says about itself: 0 a bundle, 1 embedded, 2 a model file.
    ///
    /// - Parameters:
    ///   - embedded: Whether it is embedded.
    ///   - path: Its path in the models folder.
    /// - Returns: The rank, lower preferred.
    static func rank(embedded: Bool, path: String?) -> Int {
        if embedded { return 1 }
        return path?.hasSuffix(".tiobundle") == true || path?.hasSuffix(".tiobundle/") == true ? 0 : 2
    }

    /// Which of several models to keep, one per digest (models without a digest are all kept):
    /// the lowest rank, then the first.
    ///
    /// - Parameter models: Each model's digest and rank, in catalog order.
    /// - Returns: The indices kept, in order, each with the indices of the copies it stands for.
    static func onePerNetwork(_ models: [(digest: String?, rank: Int)]) -> [(index: Int, copies: [Int])] {
        var best: [String: Int] = [:]
        for (index, model) in models.enumerated() {
            guard let digest = model.digest else { continue }
            if let current = best[digest], models[current].rank <= model.rank { continue }
            best[digest] = index
        }
        return models.indices.compactMap { index in
            guard let digest = models[index].digest else { return (index, []) }
            guard best[digest] == index else { return nil }
            return (index, models.indices.filter { $0 != index && models[$0].digest == digest })
        }
    }
}
