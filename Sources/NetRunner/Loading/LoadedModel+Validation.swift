extension LoadedModel {
    /// Checks a model the way running it would, before anyone does: the model gate's
    /// compile-and-run in a child process (``ModelGate``), the description against the model's
    /// tensors (``Model``), and the image task it runs as (``ImageTask``: an image input of a
    /// shape the task reads, outputs the task decodes).
    ///
    /// `netrunner bundle validate`, `netrunner import` and the server's import run this one
    /// check, so a model that passes it is one every command can run.
    ///
    ///     let model = try LoadedModel(.path("Downloads/flowers.tiobundle"))
    ///     let kind = try model.validateAsImageModel()   // .classification
    ///
    /// - Returns: The task it runs as.
    /// - Throws: ``ModelGate`` refusals, ``ModelBundleError`` for a description that does not
    ///   fit the model, ``NetRunnerError`` for a model that is not an image model.
    @discardableResult
    public func validateAsImageModel() throws -> ImageTask.Kind {
        try ModelGate.admit(self)
        let kind = ImageTask.kind(of: self)
        // A described classifier is also run TensorIO's way (`netrunner run`): every output
        // by its name, checked against the description.
        if description != nil, VisionTaskRegistry.definition(for: kind)?.runsAsDescribedModel == true {
            _ = try Model(model: self)
        }
        var options = ImageTask.Options()
        options.kind = kind
        options.threadCount = 1
        _ = try ImageTask(model: self, options: options)
        return kind
    }
}
