import ArgumentParser
import NetRunnerCommandLine
import NetRunnerHub
import NetRunnerSupport

/// `netrunner-net hub-path hub:NAME[@REF]`, the local path of a hub's model.
///
/// Downloaded once (verified, cached), then read from the cache; when the hub cannot be
/// reached, the verified copy. `netrunner` runs it to resolve `--model hub:...` (its notes go
/// to stderr, the path to stdout).
struct HubPath: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub-path", abstract: "Print the local path of a hub: model (for netrunner --model hub:).",
        shouldDisplay: false)

    @Argument(help: "hub:NAME[@VERSION|@ALIAS].")
    var reference: String

    @Option(help: "The hub's address (\(HubSetting.precedence)).")
    var hub: String?

    @Option(help: "The hub's key (default: NETRUNNER_HUB_TOKEN).")
    var token: String?

    func run() async throws {
        guard let remote = CustomRemoteModel.parse(reference) else {
            throw ValidationError("\(reference) is not hub:NAME[@VERSION|@ALIAS].")
        }
        let downloader = ModelDownloader(hub: HubClient(address: try HubSetting.address(flag: hub), token: token))
        let model = try await downloader.getModel(
            name: "\(remote.name)@\(remote.reference)", downloadType: .latestModel)
        if let reason = model.fallbackReason {
            // ML Kit's local fallback, said: which cached version, and why not the hub's answer.
            Console.diagnostic(
                URLCredentials.masked(
                    "note: \(reason); using the cached \(reference), version \(model.version) (sha256 \(model.hash.prefix(12)))"
                ))
        }
        Console.diagnostic(
            "note: \(reference) is version \(model.version) (sha256 \(model.hash.prefix(12))), \(model.path)")
        Console.print(model.path)
    }
}
