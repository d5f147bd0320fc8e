import NetRunnerHub

/// `--model hub:NAME[@VERSION|@ALIAS]`: the hub's model, downloaded once (verified, cached),
/// then read from the cache; when the hub cannot be reached, the verified copy is used.
enum HubReference {
    /// The local path of a `hub:` model, or the text itself for any other model.
    ///
    /// - Parameters:
    ///   - text: What `--model` says.
    ///   - hub: `--hub`, else `NETRUNNER_HUB`.
    ///   - token: `--token`, else `NETRUNNER_HUB_TOKEN`.
    /// - Returns: A path `LoadedModel(.path(_:))` reads.
    /// - Throws: ``HubClientError`` when the model can be neither downloaded nor found locally.
    static func localPath(_ text: String, hub: String? = nil, token: String? = nil) async throws -> String {
        guard let remote = CustomRemoteModel.parse(text) else { return text }
        let downloader = ModelDownloader(hub: HubClient(address: hub, token: token))
        let model = try await downloader.getModel(
            name: "\(remote.name)@\(remote.reference)", downloadType: .latestModel)
        Console.diagnostic("note: \(text) is version \(model.version) (sha256 \(model.hash.prefix(12))), \(model.path)")
        return model.path
    }
}
