import FoundationEssentials
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What makes a bulk run the same run: the model (by SHA-256), the options that change answers,
/// and the folders it covers (by their real path, so `./photos`, `photos/` and an absolute
/// spelling are one folder).
///
/// A bulk job keeps it beside its results file `F`, in `F.run.json` (written
/// atomically), so that the results file itself stays one result per line for `jq` and
/// pandas. A resumed run whose identity differs is refused, naming what differs.
package struct BulkRunIdentity: Codable, Equatable, Sendable {
    /// A folder or file given on the command line: as typed the first time, and its real path.
    package struct Root: Codable, Equatable, Sendable {
        /// The spelling the results file's image paths start with.
        package var typed: String
        /// The real path (links resolved).
        package var real: String

        /// Creates a root, resolving its real path.
        ///
        /// - Parameter typed: The path as given.
        package init(typed: String) {
            self.typed = typed
            self.real = PathText.realPath(typed) ?? typed
        }
    }

    /// The model's SHA-256.
    package var modelSHA256: String
    /// The model's name, for people.
    package var model: String
    /// The options that change answers, by flag name, canonical text.
    package var options: [String: String]
    /// The folders and files the run covers.
    package var roots: [Root]

    enum CodingKeys: String, CodingKey {
        case model, options, roots
        case modelSHA256 = "model_sha256"
    }

    /// Creates an identity.
    ///
    /// - Parameters:
    ///   - modelSHA256: The model's SHA-256.
    ///   - model: The model's name.
    ///   - options: The options that change answers.
    ///   - roots: The paths given, as typed.
    package init(modelSHA256: String, model: String, options: [String: String], roots: [String]) {
        self.modelSHA256 = modelSHA256
        self.model = model
        self.options = options
        self.roots = roots.map(Root.init(typed:))
    }

    /// Where the identity of a results file is kept.
    ///
    /// - Parameter output: The results file.
    /// - Returns: `output` + `.run.json`.
    package static func sidecar(for output: String) -> String { output + ".run.json" }

    /// The identity kept beside a results file, if any.
    ///
    /// - Parameter output: The results file.
    /// - Returns: The identity, or `nil` when there is none.
    /// - Throws: ``BulkError/damagedRunDescription(file:reason:)`` for a damaged one.
    package static func read(for output: String) throws(BulkError) -> BulkRunIdentity? {
        let path = sidecar(for: output)
        guard access(path, F_OK) == 0 else { return nil }
        do {
            return try JSONDecoder().decode(BulkRunIdentity.self, from: try FileIO.contents(of: path))
        } catch {
            throw .damagedRunDescription(file: path, reason: "\(error)")
        }
    }

    /// Writes the identity beside a results file, atomically (a temporary file renamed).
    ///
    /// - Parameter output: The results file.
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` when it cannot be written.
    package func write(for output: String) throws(BulkError) {
        let encoder = JSONCoding.encoder(pretty: true)
        let path = Self.sidecar(for: output)
        do {
            try FileIO.writeAtomically(try encoder.encode(self) + Data("\n".utf8), to: path)
        } catch {
            throw .unreadableResults(file: path, reason: "\(error)")
        }
    }

    /// What differs between the run that wrote a file and this one, in words; empty when this
    /// run may resume it.
    ///
    /// - Parameter recorded: The identity kept beside the file.
    /// - Returns: One phrase per difference.
    package func differences(from recorded: BulkRunIdentity) -> [String] {
        var found: [String] = []
        if modelSHA256 != recorded.modelSHA256 {
            found.append(
                "the model (\(recorded.model), SHA-256 \(recorded.modelSHA256.prefix(12)); "
                    + "now \(model), \(modelSHA256.prefix(12)))")
        }
        for key in Set(options.keys).union(recorded.options.keys).sorted() where options[key] != recorded.options[key] {
            found.append("\(key) (\(recorded.options[key] ?? "not given"); now \(options[key] ?? "not given"))")
        }
        for root in roots where !recorded.roots.contains(where: { $0.real == root.real }) {
            let covered = recorded.roots.map(\.typed).joined(separator: ", ")
            found.append("\(root.typed) (not part of that run, which covered \(covered))")
        }
        return found
    }

    /// A file path of this run spelled as the recorded run spelled it (its root's first
    /// spelling), so that the same file has one key whatever spelling of its folder is typed.
    ///
    /// - Parameters:
    ///   - path: A listed file, under one of this run's roots.
    ///   - recorded: The identity kept beside the file.
    /// - Returns: The path as the results file writes it.
    package func spelling(of path: String, as recorded: BulkRunIdentity) -> String {
        for root in roots.sorted(by: { $0.typed.count > $1.typed.count }) {
            guard let old = recorded.roots.first(where: { $0.real == root.real }), old.typed != root.typed else {
                continue
            }
            let typed = root.typed.hasSuffix("/") && root.typed.count > 1 ? String(root.typed.dropLast()) : root.typed
            let oldTyped = old.typed.hasSuffix("/") && old.typed.count > 1 ? String(old.typed.dropLast()) : old.typed
            if path == typed { return oldTyped }
            if path.hasPrefix(typed + "/") { return oldTyped + path.dropFirst(typed.count) }
        }
        return path
    }
}
