import FoundationEssentials

/// The paths a file records for later: absolute, so that they are found from any folder (a
/// similarity index's photos and model, which `similar search`, `similar duplicates` and
/// `serve --index` read; the extractor an imprinted bundle's `model.json` names).
enum RecordedPaths {
    /// A path made absolute against a folder and normalised as text: `.` and empty components
    /// dropped, `..` taking off the component before it (symbolic links are not resolved, so a
    /// photo keeps the name it was listed by).
    ///
    /// - Parameters:
    ///   - path: A path, relative or absolute.
    ///   - folder: What a relative path is relative to (default: the working folder).
    /// - Returns: The absolute path.
    static func absolute(_ path: String, in folder: String = FileManager.default.currentDirectoryPath) -> String {
        let whole = path.hasPrefix("/") ? path : folder + "/" + path
        var components: [Substring] = []
        for component in whole.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }
}
