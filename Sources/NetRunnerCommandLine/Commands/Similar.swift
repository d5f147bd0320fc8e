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
                resumes, and a run on a folder indexed before embeds only its new and changed photos and leaves \
                out the removed ones). `similar search` answers the photos nearest to a photo (embedded by the index's model) \
                or to a photo of the index; `similar duplicates` groups the photos whose embeddings are alike \
                above a threshold. Search is exact (every embedding compared, on every core): \
                docs/embeddings.md#how-far-exact-search-goes has the measured times and memory up to a million photos. \
                `similar index --index-type HNSW32` (any FAISS factory string) writes a FAISS index instead, with \
                a JSON sidecar beside it; search and duplicates read either kind (docs/embeddings.md#faiss-indexes).
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
                other is a photo or a folder of photos, embedded by `bulk --sync` with --model (default: the \
                installed embedder) into INDEX.jsonl, which a second run resumes: it embeds only the photos new or \
                changed since (size, time and file number, in INDEX.jsonl.files.json) and leaves out those removed. Failed lines are skipped, the first five \
                named with why. The index records each photo by its absolute path (those of a results file taken \
                from the current folder) and the model by id, hub: name or absolute path, so it is searched from \
                any folder. The index is written whole or not at all. --index-type writes FAISS's own index file \
                (Linux only for now), the paths and the model in INDEX.json beside it: Flat (exact), HNSW32 \
                (its efSearch raised until recall at 10 reaches 0.95, measured against exact search), IVF4096,Flat \
                or IVF1024,PQ64 (trained on a sample, at least 39 embeddings per centroid).
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

        @Option(help: "Interpreters side by side when embedding photos, and FAISS's threads (default: every core).")
        var threads: Int?

        @Option(
            help:
                "Write a FAISS index of this factory string (Flat, HNSW32, IVF1024,PQ64) instead of NetRunner's exact index."
        )
        var indexType: String?

        @Flag(help: "Embed the photos afresh instead of resuming INDEX.jsonl.")
        var restart = false

        func validate() throws {
            guard !sources.isEmpty else { throw ValidationError("Name a results file, a photo or a folder.") }
            if let threads, !(1...256).contains(threads) {
                throw ValidationError("--threads \(threads) is not between 1 and 256.")
            }
            if let indexType {
                guard !indexType.isEmpty, indexType.utf8.count <= 256,
                    indexType.allSatisfy({ $0.isASCII && !$0.isWhitespace })
                else { throw ValidationError("--index-type is a FAISS factory string such as HNSW32 or IVF1024,PQ64.") }
                guard SimilarityIndexFile.hasFaiss else {
                    throw ValidationError("--index-type: this build has no FAISS (Linux only for now).")
                }
            }
        }

        func run() async throws {
            let clock = ContinuousClock()
            let start = clock.now
            var files = sources.filter { $0.hasSuffix(".jsonl") }
            let photos = sources.filter { !$0.hasSuffix(".jsonl") }
            let typedModel = model ?? (ModelCatalog.installedDefaults[.embedding] ?? "")
            let modelName = Self.recorded(model: typedModel)
            if !photos.isEmpty {
                let embedded = output + ".jsonl"
                // Synced: the photos changed since the last run are embedded again, and the
                // removed ones leave the index; only new and changed photos are embedded.
                var arguments = photos + ["--output", embedded, "--no-progress", "--sync"]
                if !typedModel.isEmpty { arguments += ["--model", typedModel] }
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
            let (built, skipped, firstSkipped) = try Self.index(of: files, model: modelName)
            for line in Self.skippedMessage(skipped, first: firstSkipped, files: files) { Console.diagnostic(line) }
            guard let index = built else {
                throw ValidationError(
                    "No embedding in \(files.joined(separator: ", ")) (\(skipped) other lines): index a bulk run of an "
                        + "image embedder (`netrunner bulk --model EMBEDDER ...`).")
            }
            var kind = ""
            if let indexType {
                try SimilarityIndexFile.setFaissThreads(threads ?? ProcessInfo.processInfo.activeProcessorCount)
                let (sha256, preprocessing) = await Self.modelFacts(typedModel)
                let sidecar = try SimilarityIndexFile.writeFaiss(
                    index, factory: indexType, to: output, modelSHA256: sha256, preprocessing: preprocessing)
                kind =
                    " (FAISS \(indexType)" + (sidecar.searchParameters.map { ", \($0)" } ?? "")
                    + (sidecar.recallAt10.map { ", recall at 10 \(fixedDecimals($0, 3))" } ?? "")
                    + "; sidecar \(FaissSidecar.path(for: output)))"
            } else {
                try index.write(to: output)
            }
            let seconds = (clock.now - start).inMilliseconds / 1000
            Console.print(
                "indexed \(index.count) embeddings of \(index.dimension) values (\(index.model.isEmpty ? "model not named" : index.model)) "
                    + "into \(output)\(kind) in \(fixedDecimals(seconds, 1)) s"
                    + (skipped > 0 ? "; \(skipped) lines without an embedding skipped" : ""))
        }

        /// The model as the index records it, to be found again from any folder: a path made
        /// absolute; an id of the catalog, or `hub:NAME`, as it is.
        ///
        /// - Parameter model: `--model` as given (or the default embedder's id).
        /// - Returns: What the index records.
        static func recorded(model: String) -> String {
            guard !model.isEmpty, !HubReference.isHubModel(model), ModelCatalog.exists(model) else { return model }
            return RecordedPaths.absolute(model)
        }

        /// The model's SHA-256 and preprocessing for a FAISS index's sidecar, when the model loads
        /// here (`nil`s otherwise: a results file of a model not installed).
        ///
        /// - Parameter model: `--model` as given (or the default embedder's id).
        /// - Returns: The file's SHA-256 and the embedder's preprocessing.
        static func modelFacts(_ model: String) async -> (String?, FaissSidecar.Preprocessing?) {
            guard !model.isEmpty, let flags = try? RequiredModelOptions.parse(["--model", model]),
                let loaded = try? await flags.load(defaultFor: .embedding)
            else { return (nil, nil) }
            let preprocessing = (try? ImageEmbedder(model: loaded)).map { FaissSidecar.Preprocessing($0.preprocessing) }
            return (loaded.sha256, preprocessing)
        }

        /// How many skipped lines are named, with why, before the rest are counted.
        static let namedSkips = 5

        /// The lines left out of the index: the first few by image, with why, then a count.
        ///
        /// - Parameters:
        ///   - count: The lines skipped.
        ///   - first: The first ``namedSkips`` of them: image and reason.
        ///   - files: The results files read.
        /// - Returns: The message's lines (none when nothing was skipped).
        static func skippedMessage(_ count: Int, first: [(image: String, reason: String)], files: [String]) -> [String]
        {
            guard count > 0 else { return [] }
            var lines = [
                "\(count) \(count == 1 ? "line" : "lines") of \(files.joined(separator: ", ")) without an embedding, "
                    + "not indexed:"
            ]
            // A decoding error names the photo first already.
            lines += first.map {
                $0.reason.hasPrefix($0.image + " ") ? "  \($0.reason)" : "  \($0.image): \($0.reason)"
            }
            if count > first.count { lines.append("  and \(count - first.count) more") }
            return lines
        }

        /// The index of every embedding in results files, and the lines without one; built
        /// outside the command's async context, whose captured variables cost a check on
        /// every access.
        ///
        /// - Parameters:
        ///   - files: JSON Lines results files.
        ///   - model: The model the index records.
        /// - Returns: The index (`nil` when no line holds an embedding), the lines skipped, and
        ///   the first ``namedSkips`` of them (image and why).
        /// - Throws: ``BulkError`` for a file that cannot be read; a `NetRunnerError` for an
        ///   embedding the index refuses.
        static func index(
            of files: [String], model: String
        ) throws -> (EmbeddingIndex?, Int, [(image: String, reason: String)]) {
            var index: EmbeddingIndex?
            var skipped = 0
            var firstSkipped: [(image: String, reason: String)] = []
            func skip(_ image: String, _ reason: String) {
                if firstSkipped.count < namedSkips { firstSkipped.append((image, reason)) }
            }
            for file in files {
                skipped += try BulkResultsFile.forEachEmbedding(in: file, skipping: skip) { image, embedding in
                    if index == nil { index = EmbeddingIndex(dimension: embedding.count, model: model) }
                    try index?.add(path: RecordedPaths.absolute(image), embedding: embedding)
                }
            }
            return (index, skipped, firstSkipped)
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
            try SimilarityIndexFile.setFaissThreads(ProcessInfo.processInfo.activeProcessorCount)
            let index = try SimilarityIndexFile.read(from: self.index)
            var embedder: ImageEmbedder?
            var failed = 0
            for photo in photos {
                let matches: [EmbeddingIndex.Match]
                do {
                    if let position = index.position(of: photo) ?? index.position(of: RecordedPaths.absolute(photo)) {
                        matches = try index.search(index.embedding(at: position), k: k, excluding: position)
                    } else {
                        if embedder == nil {
                            var flags = model
                            let recorded = flags.model == nil && !index.model.isEmpty
                            if recorded { flags.model = index.model }
                            let loaded: LoadedModel
                            do {
                                loaded = try await flags.load(defaultFor: .embedding)
                            } catch let error where recorded {
                                throw ValidationError(
                                    "\(self.index) was made with the model \(index.model), which cannot be loaded here "
                                        + "(\(error)); give --model (the same model) to embed \(photo).")
                            }
                            var options = ImageEmbedder.Options()
                            options.baseOptions = flags.baseOptions
                            embedder = try ImageEmbedder(model: loaded, options: options)
                        }
                        guard let embedder else { return }
                        matches = try index.search(try embedder.run(.file(photo)).embedding, k: k, excluding: nil)
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
                (a photo in two pairs joins them). With the MobileNet V1 embedder on 48 photos, 0.98 found every \
                copy saved at JPEG quality 90 and 46 of 48 halved ones but 36 of 48 saved at quality 60 (down to \
                0.835); 0.95 found 47 of those, and most mirrored and 90%-cropped copies; 0.90 found nearly all, \
                and two different photos were at most 0.79 (docs/embeddings.md#what-a-similarity-means). \
                --report writes a page with the groups as pictures.
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
            try SimilarityIndexFile.setFaissThreads(ProcessInfo.processInfo.activeProcessorCount)
            let index = try SimilarityIndexFile.read(from: self.index)
            let groups = try index.duplicateGroups(threshold: Float(threshold))
            for group in groups {
                if json {
                    let line = GroupLine(
                        paths: group.members.map { index.paths[$0] },
                        pairs: group.pairs.map {
                            .init(a: index.paths[$0.a], b: index.paths[$0.b], similarity: $0.similarity)
                        },
                        pairCount: group.pairCount, leastSimilarity: group.leastSimilarity)
                    try AnswerOutput.printLine(line)
                } else {
                    Console.print(
                        "\(group.members.count) photos, similarity \(fixedDecimals(Double(group.leastSimilarity), 4)) or more:"
                    )
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

        /// One group as `--json` prints it: its photos, each photo's most similar other photo
        /// of the group (each pair once: at most one per photo, however many pairs the group
        /// holds), the number of pairs at or above the threshold and the least of them.
        struct GroupLine: Encodable {
            var paths: [String]
            var pairs: [Pair]
            var pairCount: Int
            var leastSimilarity: Float

            enum CodingKeys: String, CodingKey {
                case paths, pairs
                case pairCount = "pair_count"
                case leastSimilarity = "least_similarity"
            }

            struct Pair: Encodable {
                var a: String
                var b: String
                var similarity: Float
            }
        }
    }
}
