/// What a library task is called, in one value: the names its ``VisionTaskDefinition`` gives.
struct TaskNames: Sendable {
    /// The task's name, in JSON and messages (`classification`).
    var kind: ImageTask.Kind
    /// The verb of its command and its server route (`classify`).
    var verb: String
    /// What a model that does it is called (`classifier`).
    var model: String
    /// The same with its article (`a classifier`).
    var withArticle: String
}

/// A definition of one of the library's own tasks: its names are one ``TaskNames``.
protocol LibraryTaskDefinition: VisionTaskDefinition {
    /// The task's names.
    static var names: TaskNames { get }
}

extension LibraryTaskDefinition {
    /// ``TaskNames/kind``.
    var kind: ImageTask.Kind { Self.names.kind }
    /// ``TaskNames/verb``.
    var verb: String { Self.names.verb }
    /// ``TaskNames/model``.
    var modelName: String { Self.names.model }
    /// ``TaskNames/withArticle``.
    var modelNameWithArticle: String { Self.names.withArticle }
}
