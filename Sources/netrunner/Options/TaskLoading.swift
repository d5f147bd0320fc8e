import NetRunner

/// Loads the model a command names, or the embedded default, as an ``ImageTask``.
enum TaskLoading {
    /// The model a command was given: a path, or nil for the embedded classifier.
    ///
    /// - Parameters:
    ///   - model: A bundle folder, zipped bundle or `.tflite` file, or `nil`.
    ///   - options: How to load and run it.
    /// - Returns: The task.
    /// - Throws: The loading errors of ``ImageTask/init(modelAt:options:)``.
    static func task(model: String?, options: ImageTask.Options) throws -> ImageTask {
        if let model { return try ImageTask(modelAt: model, options: options) }
        let labels = try LabelMap(
            text: EmbeddedModels.classifierLabels, source: "embedded labels", classCount: 1000)
        let description = try ModelDescription.parse(
            EmbeddedModels.classifierDescription, source: EmbeddedModels.classifierName + "/model.json")
        return .classifier(
            try ImageClassifier(
                modelData: EmbeddedModels.classifier, description: description, labels: labels,
                options: options.classifierOptions))
    }
}
