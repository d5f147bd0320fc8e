/// What a command runs without `--model`, as `--model`'s help says it (see ``ModelFlags``).
package protocol ModelDefault: Sendable {
    /// The end of `--model`'s help, in its parentheses: `default: the embedded model`, or why
    /// the flag is required.
    static var modelHelp: String { get }
}

/// `classify`, `detect`, `bulk` and `stream`: the model linked into the executable for the task.
package enum EmbeddedModelDefault: ModelDefault {
    /// `default: the embedded model`.
    package static var modelHelp: String { "default: the embedded model" }
}

/// `pose`, `segment` and `embed`: no model of theirs is linked in; an installed copy runs the model
/// installed for the task (``ModelCatalog/installedDefaults``), a build without one needs `--model`.
package enum NoModelDefault: ModelDefault {
    /// `default: the installed model of the task; required where none is installed`.
    package static var modelHelp: String {
        "default: the model installed for this task with NetRunner (MoveNet for pose, DeepLab v3 for segment, "
            + "MobileNet V1's embedding extractor for embed); "
            + "required where NetRunner is not installed: none is built in"
    }
}

/// The model flags of `pose`, `segment` and `embed`, whose `--model` is required.
package typealias RequiredModelOptions = ModelFlags<NoModelDefault>
