import FoundationEssentials
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NetRunner
import NetRunnerHub
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Publishing: an upload streamed, validated, stored and recorded.
extension HubRoutes {
    /// Takes an upload: streamed into the data folder (size-limited), validated as `netrunner
    /// import` does (a child process runs the model), stored, then recorded.
    ///
    /// The version is recorded in one transaction; until that commits nothing of it is visible.
    /// A version of another task than the model's newest is refused (409, naming both) unless
    /// `allowTaskChange` (`?allow_task_change=true`, `hub push --allow-task-change`): otherwise
    /// `hub:NAME@latest` would change task under its users without a word.
    func publish(
        _ request: Request, name: String, alias: String?, allowTaskChange: Bool, by who: String
    ) async throws -> HubVersion {
        if let length = request.headers[.contentLength] {
            do {
                _ = try CheckedNumber.integer(length, "Content-Length", in: 0...maximumUploadBytes)
            } catch {
                throw HubError.tooLarge(
                    "The upload is \(length.prefix(40)) bytes; this hub takes at most \(maximumUploadBytes) "
                        + "(--max-upload-bytes).")
            }
        }
        // uploads/<host>-<pid>/<random>/<name>: a .tflite is described by its hub name.
        let uploads = Uploads.folder(in: dataFolder + "/uploads")
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        var template = Array((uploads + "/upload-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HubError.conflict("cannot store the upload: \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/" + name
        var kept = false
        defer { if !kept { unlink(file) } }
        let sha256: String
        let size: Int
        do {
            let writer = try HashingFileWriter(creating: file)
            var reader = request.body.makeAsyncIterator()
            while let buffer = try await Self.next(&reader) {
                guard writer.byteCount + buffer.readableBytes <= maximumUploadBytes else {
                    throw HubError.tooLarge(
                        "The upload is larger than this hub's limit of \(maximumUploadBytes) bytes.")
                }
                try buffer.withUnsafeReadableBytes { try writer.write($0) }
            }
            size = writer.byteCount
            sha256 = try writer.finish()
        } catch let error as FileError {
            throw HubError.conflict("cannot store the upload: \(error.reason)")
        }
        guard size > 0 else { throw HubError.badRequest("The upload is empty: send a zipped bundle or a .tflite.") }
        let staged: StagedModel
        do {
            staged = try await ModelImporter(modelsFolder: dataFolder + "/staging").stage(from: file)
        } catch {
            throw HubError.invalidModel(Self.uploadReason(error, file: file))
        }
        let format = staged.path.lowercased().hasSuffix(".tflite") ? "tflite" : "zip"
        try await blobs.put(movingFile: file, sha256: sha256)
        kept = true
        // Recorded behind the requests waiting for the store (the update checks a flood of pushes
        // would otherwise queue behind), as the gates' evaluations are: at most
        // HubStore.backgroundEvery requests go first.
        let (version, evaluations) = try await HubStore.$yieldsToRequests.withValue(true) {
            try await store.publish(
                name: name, sha256: sha256, size: size, format: format, task: staged.kind.rawValue,
                modelID: staged.id, description: staged.name, by: who, alias: alias, allowTaskChange: allowTaskChange)
        }
        logger.notice("published \(name)@\(version.version) (\(sha256.prefix(12)), \(size) bytes) by \(who)")
        await gates.submit(evaluations)
        return version
    }

    /// An import error in an upload's words (the temporary file's name left out).
    static func uploadReason(_ error: any Error, file: String) -> String {
        var text = "\(error)".replacing("Cannot import \(file): ", with: "").replacing(file, with: "the upload")
        text = text.replacing(String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/", with: "")
        if text.hasSuffix(" Nothing was installed.") { text = String(text.dropLast(" Nothing was installed.".count)) }
        return "The upload is not a model this hub takes: " + text
    }

    /// A yes-or-no query parameter: absent or `false` is no, `true` is yes, anything else 400.
    static func flag(_ value: String?, _ name: String) throws -> Bool {
        switch value {
        case nil, "false": return false
        case "true": return true
        case let other?:
            throw HubError.badRequest("?\(name)= is true or false, not \"\(other.prefix(40))\".")
        }
    }
}
