import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerEngine
import NetRunnerEvaluation
import NetRunnerImage
import NetRunnerJobs
import NetRunnerSupport

extension NetRunnerCommand {
    /// `netrunner similar`: an index of photos' embeddings, searched for the nearest photos and
    /// for near-duplicates.
    struct Similar: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find similar photos and near-duplicates from their embeddings.",
            discussion: """
                `similar index` builds an index from embeddings: a bulk run's results file, or photos and \
                folders, embedded as it goes (by `bulk`, into INDEX.jsonl beside the index: an interrupted run \
                resumes). `similar search` answers the photos nearest to a photo (embedded by the index's model) \
                or to a photo of the index; `similar duplicates` groups the photos whose embeddings are alike \
                above a threshold. Search is exact (every embedding compared, on every core): \
                docs/similar.md has the measured times and memory up to a million photos.
                """,
            subcommands: [Index.self, Search.self, Duplicates.self])
    }
}

extension NetRunnerCommand.Similar {
    /// `netrunner similar index SOURCE... --output INDEX`.
    struct Index: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build an index of embeddings from a bulk results file, or from photos and folders.",
            discussion: """
                A SOURCE ending in .jsonl is a results file of `bulk` or `embed --json` with an embedder; any \
                other is a photo or a folder of photos, embedded by `bulk` with --model (default: the installed \
                embedder) into INDEX.jsonl, which a second run resumes. Failed lines are skipped and counted. \
                The index is written whole or not at all.
                """)

        @Argument(help: "Results files (.jsonl), photos or folders.")
        var sources: [String] = []

        @Option(name: .shortAndLong, help: "The index file to write (photos.nrindex).")
        var output: String

        @Option(
            name: .shortAndLong,
            help:
                "The embedder for photos and folders, and the model the index records (default: the installed embedder)."
        )
        var model: String?

        @Option(help: "Interpreters side by side when embedding photos (default: every core).")
        var threads: Int?

        @Flag(help: "Embed the photos afresh instead of resuming INDEX.jsonl.")
        var restart = false

        func validate() throws {
            guard !sources.isEmpty else { throw ValidationError("Name a results file, a photo or a folder.") }
            if let threads, !(1...256).contains(threads) {
                throw ValidationError("--threads \(threads) is not between 1 and 256.")
            }
        }

        func run() async throws {
            let clock = ContinuousClock()
            let start = clock.now
            var files = sources.filter { $0.hasSuffix(".jsonl") }
            let photos = sources.filter { !$0.hasSuffix(".jsonl") }
            let modelName = model ?? (ModelCatalog.installedDefaults[.embedding] ?? "")
            if !photos.isEmpty {
                let embedded = output + ".jsonl"
                var arguments = photos + ["--output", embedded, "--no-progress"]
                if let model {
                    arguments += ["--model", model]
                } else if !modelName.isEmpty {
                    arguments += ["--model", modelName]
                }
                if let threads { arguments += ["--threads", String(threads)] }
                if restart { arguments.append("--restart") }
                let bulk = try NetRunnerCommand.Bulk.Images.parse(arguments)
                do {
                    try await bulk.run()
                } catch let code as ExitCode where code == .failure {
                    // Photos that failed are on their lines; the index skips them.
                }
                files.append(embedded)
            }
            let (built, skipped) = try Self.index(of: files, model: modelName)
            guard let index = built else {
                throw ValidationError(
                    "No embedding in \(files.joined(separator: ", ")) (\(skipped) other lines): index a bulk run of an "
                        + "image embedder (`netrunner bulk --model EMBEDDER ...`).")
            }
            try index.write(to: output)
            let seconds = (clock.now - start).inMilliseconds / 1000
            Console.print(
                "indexed \(index.count) embeddings of \(index.dimension) values (\(index.model.isEmpty ? "model not named" : index.model)) "
                    + "into \(output) in \(fixedDecimals(seconds, 1)) s"
                    + (skipped > 0 ? "; \(skipped) lines without an embedding skipped" : ""))
        }

        /// The index of every embedding in results files, and the lines without one; built
        /// outside the command's async context, whose captured variables cost a check on
        /// every access.
        ///
        /// - Parameters:
        ///   - files: JSON Lines results files.
        ///   - model: The model the index records.
        /// - Returns: The index (`nil` when no line holds an embedding) and the lines skipped.
        /// - Throws: ``BulkError`` for a file that cannot be read; a `NetRunnerError` for an
        ///   embedding the index refuses.
        static func index(of files: [String], model: String) throws -> (EmbeddingIndex?, Int) {
            var index: EmbeddingIndex?
            var skipped = 0
            for file in files {
                skipped += try BulkResultsFile.forEachEmbedding(in: file) { image, embedding in
                    if index == nil { index = EmbeddingIndex(dimension: embedding.count, model: model) }
                    try index?.add(path: image, embedding: embedding)
                }
            }
            return (index, skipped)
        }
    }

    /// `netrunner similar search INDEX PHOTO... [-k 5]`.
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the photos of an index nearest to each photo (most similar first).",
            discussion: """
                A PHOTO that is in the index (its path as indexed) is compared by its stored embedding, itself left \
                out; any other is embedded with --model (default: the model the index records).
                """)

        @Argument(help: "The index file (from `similar index`).")
        var index: String

        @Argument(help: "Photos to find similar ones for.")
        var photos: [String] = []

        @Option(name: .short, help: "How many photos to answer for each, 1 to 1000.")
        var k = 5

        @OptionGroup var model: RequiredModelOptions

        @Flag(help: "Print one JSON object per photo (JSON Lines).")
        var json = false

        func validate() throws {
            guard !photos.isEmpty else { throw ValidationError("Name at least one photo to search with.") }
            guard (1...1000).contains(k) else { throw ValidationError("-k \(k) is not between 1 and 1000.") }
        }

        func run() async throws {
            let index = try EmbeddingIndex.read(from: self.index)
            var embedder: ImageEmbedder?
            var failed = 0
            for photo in photos {
                let matches: [EmbeddingIndex.Match]
                do {
                    if let position = index.position(of: photo) {
                        matches = try index.search(index.embedding(at: position), k: k, excluding: position)
                    } else {
                        if embedder == nil {
                            var flags = model
                            if flags.model == nil, !index.model.isEmpty { flags.model = index.model }
                            let loaded = try await flags.load(defaultFor: .embedding)
                            var options = ImageEmbedder.Options()
                            options.baseOptions = flags.baseOptions
                            embedder = try ImageEmbedder(model: loaded, options: options)
                        }
                        guard let embedder else { return }
                        matches = try index.search(try embedder.run(.file(photo)).embedding, k: k)
                    }
                } catch let error as ImageError {
                    failed += 1
                    Console.diagnostic("\(photo): \(error)")
                    continue
                }
                if json {
                    let line = SearchLine(
                        query: photo, matches: matches.map { .init(path: $0.path, similarity: $0.similarity) })
                    try AnswerOutput.printLine(line)
                } else {
                    Console.print(photo)
                    for match in matches {
                        Console.print("  \(fixedDecimals(Double(match.similarity), 4))  \(match.path)")
                    }
                }
            }
            if failed > 0 { throw ExitCode.failure }
        }

        /// One photo's answer as `--json` prints it.
        struct SearchLine: Encodable {
            var query: String
            var matches: [Match]

            struct Match: Encodable {
                var path: String
                var similarity: Float
            }
        }
    }

    /// `netrunner similar duplicates INDEX [--threshold 0.98]`.
    struct Duplicates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print groups of near-duplicate photos: embeddings alike above a threshold.",
            discussion: """
                Every pair of the index is compared; pairs at or above --threshold join their photos in a group \
                (a photo in two pairs joins them). The same photo saved twice is at 1.0; with the MobileNet V1 \
                embedder, a copy re-encoded at JPEG quality 60 or halved in size measured 0.987 to 0.996, a 90% \
                crop 0.95 to 0.97, other photos of one scene lower (docs/similar.md). --report writes a page with \
                the groups as pictures.
                """)

        @Argument(help: "The index file (from `similar index`).")
        var index: String

        @Option(help: "The least cosine similarity of two photos in a group, 0 to 1.")
        var threshold = 0.98

        @Option(help: "Write an HTML page showing each group's photos.")
        var report: String?

        @Flag(help: "Print one JSON object per group (JSON Lines).")
        var json = false

        func validate() throws {
            guard threshold.isFinite, (0...1).contains(threshold) else {
                throw ValidationError("--threshold \(threshold) is not between 0 and 1.")
            }
        }

        func run() async throws {
            let index = try EmbeddingIndex.read(from: self.index)
            let groups = index.duplicateGroups(threshold: Float(threshold))
            for group in groups {
                let least = group.pairs.map(\.2).min() ?? 1
                if json {
                    let line = GroupLine(
                        paths: group.members.map { index.paths[$0] },
                        pairs: group.pairs.map { .init(a: index.paths[$0.0], b: index.paths[$0.1], similarity: $0.2) })
                    try AnswerOutput.printLine(line)
                } else {
                    Console.print(
                        "\(group.members.count) photos, similarity \(fixedDecimals(Double(least), 4)) or more:")
                    for member in group.members { Console.print("  \(index.paths[member])") }
                }
            }
            if !json {
                Console.print(
                    "\(groups.count) groups of near-duplicates (similarity \(fixedDecimals(threshold, 3)) or more) "
                        + "among \(index.count) photos")
            }
            if let report {
                let html = SimilarPhotosPage.html(
                    groups: groups.map { $0.members.map { index.paths[$0] } }, threshold: threshold,
                    folder: FileManager.default.currentDirectoryPath)
                try FileIO.writeAtomically(Data(html.utf8), to: report)
                Console.diagnostic("wrote \(report)")
            }
        }

        /// One group as `--json` prints it.
        struct GroupLine: Encodable {
            var paths: [String]
            var pairs: [Pair]

            struct Pair: Encodable {
                var a: String
                var b: String
                var similarity: Float
            }
        }
    }
}
