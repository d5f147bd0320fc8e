import FoundationEssentials
package import NetRunner
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The models one names by id, the same in every command and in `serve`: the embedded models
/// (by their `model.json` id, and by `mobilenet`, `face` and `blazeface`), then every model of
/// the models folder (bundles by their `model.json` id, `.tflite` files by file name, imports
/// included), then the models installed with NetRunner (``installedFolder``), the first of an id
/// winning.
///
/// `--model` and `--compare` take a path (an existing file or folder wins), `hub:NAME[@REF]`,
/// or one of these ids; `serve` serves ``servedModels(note:)``, one per network.
///
///     let catalog = try ModelCatalog(embedded: [(.classification, source)], folder: nil)
///     let model = try catalog.entry("mobilenet").map(catalog.load)
package struct ModelCatalog: Sendable {
    /// One model of the catalog.
    package struct Entry: Equatable, Sendable {
        /// The id `--model` takes.
        package var id: String
        /// The embedded model's task, or `nil` for a model of the folder.
        package var embedded: ImageTask.Kind?
        /// The model's path in the folder, or `nil` for an embedded model.
        package var path: String?

        /// Where the model comes from: `embedded`, or its path.
        package var origin: String { path ?? "embedded" }
    }

    /// A models folder that is not one.
    package struct FolderError: Error, CustomStringConvertible {
        /// The folder given.
        package var folder: String
        /// What gave it: `--models`, or `NETRUNNER_MODELS=`.
        package var setting = "--models"
        /// What the setting named: not a folder of models.
        package var description: String {
            "\(setting)\(setting.hasSuffix("=") ? "" : " ")\(folder) is not a folder of models."
        }
    }

    /// The models folder read without one given, when it is a folder.
    package static let defaultFolder = "Models"

    /// The installed model each task without an embedded one runs when `--model` is not given
    /// (pose: MoveNet Lightning; segmentation: DeepLab v3 on MobileNetV2; embedding: Coral's MobileNet V1
    /// embedding extractor), by id.
    package static let installedDefaults: [ImageTask.Kind: String] = [
        .pose: "movenet-single-pose-lightning-ptq", .segmentation: "deeplabv3-mnv2-pascal-quant",
        .embedding: "mobilenet-v1-1.0-224-quant-embedding-extractor",
    ]

    /// The installed model a task runs without `--model`, when NetRunner is installed with it.
    ///
    /// - Parameter kind: The task.
    /// - Returns: Its entry, from ``installed`` only (a models folder's model of that id is not
    ///   taken for it), or `nil`.
    package func installedDefault(for kind: ImageTask.Kind) -> Entry? {
        guard let id = Self.installedDefaults[kind], let installed else { return nil }
        return entries.first { $0.id == id && $0.path?.hasPrefix(installed + "/") == true }
    }

    /// The short names of the embedded models, besides their ids.
    package static let embeddedNames: [String: ImageTask.Kind] = [
        "mobilenet": .classification, "face": .detection, "blazeface": .detection,
    ]

    /// The models folder read, or `nil` when there is none.
    package let folder: String?
    /// The folder of the models installed with NetRunner read after it, or `nil`.
    package let installed: String?
    /// The models, embedded first, then the folder's by id.
    package let entries: [Entry]
    /// Bundles of the folder that could not be read, with why.
    package let unreadable: [String: String]
    /// The embedded models' bundles, by task.
    private let embeddedSources: [ImageTask.Kind: ModelSource]

    /// The models installed with NetRunner: `share/netrunner/models` beside the folder of the
    /// running executable (`/usr/bin/netrunner` reads `/usr/share/netrunner/models`, as the
    /// Debian package and `make install PREFIX=...` lay them out), when it is a folder.
    package static var installedFolder: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        #if os(Linux)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            let executable = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
            let executable = CommandLine.arguments.first ?? ""
        #endif
        guard let slash = executable.lastIndex(of: "/") else { return nil }
        let bin = String(executable[..<slash])
        guard let parentSlash = bin.lastIndex(of: "/") else { return nil }
        let folder = String(bin[..<parentSlash]) + "/share/netrunner/models"
        return ImageFiles.isDirectory(folder) ? folder : nil
    }

    /// Reads the catalog.
    ///
    /// - Parameters:
    ///   - embedded: The models built into the program, by task (a bundle with a `model.json`
    ///     gives the id).
    ///   - folder: The models folder given, else ``defaultFolder`` when it is a folder.
    ///   - installed: The installed models' folder (``installedFolder``), read after `folder`.
    /// - Throws: ``FolderError`` when `folder` is given and is not a folder; the errors of
    ///   ``ModelDirectory``.
    package init(
        embedded: [(kind: ImageTask.Kind, source: ModelSource)], folder: String?, installed: String? = nil
    ) throws {
        var entries: [Entry] = []
        var sources: [ImageTask.Kind: ModelSource] = [:]
        for (kind, source) in embedded {
            sources[kind] = source
            if case .bundleData(_, _, let description?, _) = source {
                entries.append(Entry(id: description.id, embedded: kind, path: nil))
            }
        }
        self.embeddedSources = sources
        let folder = folder ?? (ImageFiles.isDirectory(Self.defaultFolder) ? Self.defaultFolder : nil)
        var unreadable: [String: String] = [:]
        if let folder {
            guard ImageFiles.isDirectory(folder) else { throw FolderError(folder: folder) }
        }
        let installed = installed.flatMap { ImageFiles.isDirectory($0) && $0 != folder ? $0 : nil }
        for read in [folder, installed].compactMap({ $0 }) {
            let directory = try ModelDirectory(path: read)
            unreadable.merge(directory.unreadable) { first, _ in first }
            for (id, path) in directory.models.sorted(by: { $0.key < $1.key })
            where !entries.contains(where: { $0.id == id }) {
                entries.append(Entry(id: id, embedded: nil, path: path))
            }
        }
        self.folder = folder
        self.installed = installed
        self.entries = entries
        self.unreadable = unreadable
    }

    /// The model an id or short name names, or `nil`.
    ///
    /// - Parameter id: The id (exact), or a short name of an embedded model (any case).
    /// - Returns: The entry.
    package func entry(_ id: String) -> Entry? {
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
    package func unknownMessage(_ name: String, flag: String) -> String {
        var ids = entries.map(\.id) + Self.embeddedNames.keys.sorted()
        let closest = closestMatch(to: name, in: ids)
        if let closest {
            ids.removeAll { $0 == closest }
            ids.insert(closest, at: 0)
        }
        var message = "\(flag) \(name): no such file, and no model has that id"
        if let closest { message += " (did you mean \(closest)?)" }
        message += ". The ids (embedded, \(folder.map { "the models folder \($0)" } ?? "no models folder")"
        message += installed.map { ", installed in \($0))" } ?? ")"
        message += ": \(ids.joined(separator: ", ")); or give a path, or hub:NAME[@VERSION|@ALIAS]."
        if !unreadable.isEmpty {
            message += " Unreadable bundles: \(unreadable.keys.sorted().joined(separator: ", "))."
        }
        return message
    }

    /// Whether a file or folder exists at `path` (a path is taken before an id).
    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Where an entry's model is read from: its embedded bundle, or its path.
    ///
    /// - Parameter entry: An entry of this catalog.
    /// - Returns: The source.
    package func source(of entry: Entry) -> ModelSource {
        if let kind = entry.embedded, let source = embeddedSources[kind] { return source }
        return .path(entry.path ?? entry.id)
    }

    /// Reads an entry's model.
    ///
    /// The embedded models are part of the program: trusted, not checked in a child process.
    ///
    /// - Parameters:
    ///   - entry: An entry of this catalog.
    ///   - labelsPath: Labels to use instead of the model's own, if any.
    /// - Returns: The model.
    /// - Throws: The errors of ``LoadedModel/init(_:labelsPath:)``.
    package func load(_ entry: Entry, labelsPath: String? = nil) throws -> LoadedModel {
        var model = try LoadedModel(source(of: entry), labelsPath: labelsPath)
        if entry.embedded != nil { model.trust = .trusted }
        return model
    }

    /// The models to serve: every entry read, one per network (``distinct()``'s rule), with a
    /// note for each model left out and why (unreadable, a copy of another).
    ///
    /// - Parameter note: Receives each note (`not serving PATH: why`).
    /// - Returns: The models, ids unique.
    /// - Throws: An embedded model that cannot be read (the program is damaged).
    package func servedModels(note: (String) -> Void) throws -> [ServedModel] {
        for (path, reason) in unreadable.sorted(by: { $0.key < $1.key }) { note("not serving \(path): \(reason)") }
        var served: [ServedModel] = []
        for entry in entries {
            do {
                served.append(ServedModel(id: entry.id, model: try load(entry), origin: entry.origin))
            } catch {
                if entry.embedded != nil { throw error }
                note("not serving \(entry.origin): \(error)")
            }
        }
        let kept = Self.onePerNetwork(
            served.map { ($0.model.sha256, Self.rank(embedded: $0.origin == "embedded", path: $0.origin)) })
        // One note for every copy (a repository with five bare copies of its bundles' models
        // said it five times at every start).
        let pairs = kept.flatMap { index, copies in copies.map { "\(served[$0].origin) as \(served[index].id)" } }
        if !pairs.isEmpty {
            note(
                "\(pairs.count) model file\(pairs.count == 1 ? " is" : "s are") the same as another model's, "
                    + "served once: \(pairs.joined(separator: ", "))")
        }
        return kept.map { served[$0.index] }
    }

    /// The entries to show or serve: one per network.
    ///
    /// A model whose bytes another entry already has is left out in favour of the one that says most about itself: a bundle
    /// (`model.json`, labels), then an embedded model, then a `.tflite` file. The ids left out
    /// still resolve with `--model`.
    ///
    /// - Returns: The entries kept, in catalog order, each with the ids of its copies.
    package func distinct() -> [(entry: Entry, copies: [String])] {
        let digests = entries.map { (try? LoadedModel(source(of: $0)))?.sha256 }
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
