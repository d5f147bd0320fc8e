public import FoundationEssentials

/// The files the TFLite metadata writers pack into a model: an uncompressed (stored) zip
/// archive appended to the `.tflite` flatbuffer, whose central directory ends the file.
///
/// Only what the writers produce is read: stored entries, no encryption, no ZIP64. Every
/// offset and size is checked against the file, entry names with `/` or `..` are refused,
/// and entries are capped in count and size, so a hostile archive cannot read out of bounds
/// or make the reader allocate without limit.
public struct PackedFiles: Equatable, Sendable {
    /// The files by name.
    public let files: [String: Data]

    /// The most entries read, and the largest entry, in bytes.
    public static let maximumEntries = 256
    /// The largest entry accepted, in bytes.
    public static let maximumEntrySize = 16 << 20

    /// Reads the archive at the end of `model` (the whole `.tflite` file's bytes); an empty
    /// set of files when there is none.
    ///
    /// - Parameters:
    ///   - model: The model file's bytes.
    ///   - source: The model's name, for errors.
    /// - Throws: ``ModelBundleError/invalidMetadata(file:reason:)`` for an archive that is
    ///   damaged, compressed, or names files outside itself.
    public init(model: Data, source: String) throws(ModelBundleError) {
        var limits = ZipArchive.Limits()
        limits.maximumEntries = Self.maximumEntries
        limits.maximumEntrySize = Self.maximumEntrySize
        limits.maximumTotalSize = Self.maximumEntries * Self.maximumEntrySize
        limits.allowsFolders = false
        limits.allowsCompression = false
        do {
            let entries = try ZipArchive.read(model, limits: limits) { reason in
                ModelBundleError.invalidMetadata(file: source, reason: "packed files: \(reason)")
            }
            var files: [String: Data] = [:]
            for entry in entries ?? [] { files[entry.name] = entry.data }
            self.files = files
        } catch let error as ModelBundleError {
            throw error
        } catch {
            throw .invalidMetadata(file: source, reason: "packed files: \(error)")
        }
    }
}
