/// What a model path names, resolved the way every command reads `--model`: a bundle folder
/// (`.tiobundle`, `.tfbundle`), a zipped bundle (unpacked while this value lives), a `.tflite`
/// with a `model.json` beside it naming it (unless it carries its own metadata or labels are
/// given), or a bare `.tflite` file.
///
///     let resolved = try ResolvedModel(path: "model.zip")
///     if case .bundle(let bundle) = resolved.source {
///         let classifier = try ImageClassifier(bundle: bundle)
///     }
///
/// - Note: Keep the value alive until the model's files have been read: a zipped bundle's
///   temporary folder goes with it.
public struct ResolvedModel: Sendable {
    /// Where the model's files are.
    public enum Source: Sendable {
        /// A bundle: its description says how to run the model.
        case bundle(ModelBundle)
        /// A `.tflite` file: its own metadata, the options and defaults say how.
        case file(String)
    }

    /// Where the model's files are.
    public let source: Source
    /// An unpacked zip, kept until this value is released.
    private let zipped: ZippedModelBundle?

    /// Resolves a model path.
    ///
    /// - Parameters:
    ///   - path: A bundle folder, a zipped bundle or a `.tflite` file.
    ///   - labelsPath: A labels file the user gave, which makes a `.tflite` run as itself
    ///     rather than as the bundle beside it.
    /// - Throws: ``ModelBundleError`` for a bundle or zip that cannot be read.
    public init(path: String, labelsPath: String? = nil) throws(ModelBundleError) {
        if ModelBundle.isBundle(path) {
            source = .bundle(try ModelBundle(path: path))
            zipped = nil
        } else if ZippedModelBundle.isZip(path) {
            let unpacked = try ZippedModelBundle(zipAt: path)
            source = .bundle(unpacked.bundle)
            zipped = unpacked
        } else if labelsPath == nil, !TFLiteMetadata.isPresent(inModelAt: path),
            let sibling = ModelBundle.sibling(of: path)
        {
            source = .bundle(sibling)
            zipped = nil
        } else {
            source = .file(path)
            zipped = nil
        }
    }
}
