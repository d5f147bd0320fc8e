import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerEvaluation
import NetRunnerImage
import NetRunnerJobs
import NetRunnerSupport

extension NetRunnerCommand {
    /// `netrunner report RESULTS.jsonl`: a browsable gallery of bulk results.
    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Make a browsable HTML gallery of bulk results: every image with its answer; filter and open any one.",
            discussion: """
                Reads a JSON Lines results file of bulk (or an evaluation's results.jsonl) and writes one \
                self-contained page (thumbnails inline, no network): every image as a thumbnail with its best \
                answer, filtered by label, by minimum score or to the failures, and any one opened with all its \
                answers, its latencies and, for detectors, its boxes. Image paths are read as the results file \
                writes them (relative to where bulk ran); images that are gone show a placeholder. At most \
                10,000 images are shown.
                """)

        @Argument(help: "A results file written by netrunner bulk --output F.jsonl.")
        var results: String

        @Option(name: .shortAndLong, help: "The page to write (default: the results file with .html).")
        var output: String?

        func run() throws {
            guard !results.lowercased().hasSuffix(".csv") else {
                throw ValidationError("\(results) is CSV; the gallery reads JSON Lines (bulk --output F.jsonl).")
            }
            let records = try BulkResultsFile.records(in: results)
            guard !records.isEmpty else {
                throw ValidationError("\(results) holds no results (or does not exist).")
            }
            var thumbnails: [ExactString: Thumbnail] = [:]
            var missing = 0
            for record in ResultsGallery.shown(records) where thumbnails[ExactString(record.image)] == nil {
                if let thumbnail = Thumbnail.make(path: record.image, longerSide: 200) {
                    thumbnails[ExactString(record.image)] = thumbnail
                } else {
                    missing += 1
                }
            }
            let title = results.split(separator: "/").last.map(String.init) ?? results
            let page = ResultsGallery.render(records, thumbnails: thumbnails, title: title)
            let destination = output ?? Self.defaultOutput(for: results)
            try FileIO.writeAtomically(Data(page.utf8), to: destination)
            Console.print("\(destination): \(min(records.count, ResultsGallery.maximumImages)) images")
            if missing > 0 {
                Console.diagnostic("note: \(missing) image(s) could not be read again; shown without a preview.")
            }
        }

        static func defaultOutput(for results: String) -> String {
            results.hasSuffix(".jsonl") ? String(results.dropLast(6)) + ".html" : results + ".html"
        }
    }
}
