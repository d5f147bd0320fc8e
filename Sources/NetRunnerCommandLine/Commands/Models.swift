import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerEngine
import NetRunnerSupport

extension NetRunnerCommand {
    /// `netrunner models` (or `list`): the ids `--model` takes, with each model's task and origin.
    struct Models: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "List the models --model names by id: the embedded ones, the models folder's, the installed ones.",
            discussion: """
                One line a model: its id, its task, and where it comes from (embedded, or its path in the \
                models folder, imports included, or among the models installed with NetRunner in \
                share/netrunner/models beside its bin folder); the ids serve and evaluate use. A network is listed once: \
                a .tflite file whose bytes a bundle or an embedded model also has is noted on stderr. --model also takes \
                mobilenet, face and blazeface for the embedded models, a path, or hub:NAME[@VERSION|@ALIAS].
                """,
            aliases: ["list"])

        @Option(help: "The models folder (\(ModelsFolder.help)).")
        var models: String?

        @Flag(help: "One JSON object a line: id, task, origin.")
        var json = false

        /// One line of `--json`.
        struct Line: Encodable {
            var id: String
            var task: String
            var origin: String
        }

        func run() throws {
            let catalog = try ModelCatalog.commandLine(folder: models)
            let encoder = JSONCoding.encoder()
            var rows: [Line] = []
            let distinct = catalog.distinct()
            // One note for every copy, as serve says it.
            let pairs = distinct.flatMap { entry, copies in copies.map { "\($0) as \(entry.id)" } }
            if !pairs.isEmpty {
                Console.diagnostic(
                    "note: \(pairs.count) model file\(pairs.count == 1 ? " is" : "s are") the same as another "
                        + "model's, listed once: \(pairs.joined(separator: ", "))")
            }
            for (entry, _) in distinct {
                let task: String
                if let kind = entry.embedded {
                    task = kind.rawValue
                } else if let path = entry.path, let model = try? LoadedModel(.path(path)) {
                    task = ImageTask.kind(of: model).rawValue
                } else {
                    task = "unreadable"
                }
                rows.append(Line(id: entry.id, task: task, origin: entry.origin))
            }
            if json {
                for row in rows { Console.print(String(decoding: try encoder.encode(row), as: UTF8.self)) }
            } else {
                let idWidth = rows.map(\.id.count).max() ?? 0
                let taskWidth = rows.map(\.task.count).max() ?? 0
                for row in rows {
                    let id = row.id + String(repeating: " ", count: idWidth - row.id.count)
                    let task = row.task + String(repeating: " ", count: taskWidth - row.task.count)
                    Console.print("\(id)  \(task)  \(row.origin)")
                }
            }
            for (path, reason) in catalog.unreadable.sorted(by: { $0.key < $1.key }) {
                Console.diagnostic("note: \(path) is not listed: \(reason)")
            }
        }
    }
}
