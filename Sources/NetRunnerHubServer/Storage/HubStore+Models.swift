import NetRunnerHub
import SQLKit

/// A model as the hub shows it: its versions, its aliases flagged where they point to a version
/// that has not passed their gate, and the description of the version its users get.
extension HubStore {
    /// The alias whose version describes a model, when it has it.
    static let describingAlias = "production"

    /// A model with its versions and aliases; `nil` when it has no version.
    func model(_ name: String) async throws -> HubModel? {
        await acquire()
        defer { release() }
        let versions = try await database.raw(
            "SELECT * FROM hub_versions WHERE name = \(bind: name) AND deleted_at IS NULL ORDER BY version"
        ).allRows(VersionRow.self).map(\.record)
        guard let latest = versions.last, let first = versions.first else { return nil }
        let aliases = try await HubStore.flagged(
            database, name: name, aliases: try await HubStore.aliases(database, of: name))
        let described = HubStore.describedVersion(versions, aliases: aliases) ?? latest
        return HubModel(
            name: name, description: described.description, latestVersion: latest.version, versions: versions,
            aliases: aliases, createdAt: first.createdAt, descriptionVersion: described.version)
    }

    /// The version whose description a model shows: the one `production` serves (a staged
    /// rollout's largest share), else the newest. (Issue 53: the newest version's description
    /// was shown while the aliases served another.)
    static func describedVersion(_ versions: [HubVersion], aliases: [HubAlias]) -> HubVersion? {
        if let served = aliases.first(where: { $0.alias == describingAlias })?.targets.max(by: { $0.weight < $1.weight }
        ),
            let version = versions.last(where: { $0.version == served.version })
        {
            return version
        }
        return versions.last
    }

    /// The aliases with ``HubAlias/gateFlags`` set: each version a gated alias points to that
    /// has not passed its gate as it is now (unevaluated, pending or failed).
    static func flagged(_ db: any SQLDatabase, name: String, aliases: [HubAlias]) async throws -> [HubAlias] {
        let gates = try await HubStore.gates(db, of: name)
        guard !gates.isEmpty else { return aliases }
        var flagged = aliases
        for index in flagged.indices {
            guard let gate = gates.first(where: { $0.alias == flagged[index].alias }) else { continue }
            let evaluations = try await db.raw(
                """
                SELECT * FROM hub_evaluations WHERE name = \(bind: name) AND alias = \(bind: gate.alias) \
                AND gate_revision = \(bind: gate.revision)
                """
            ).allRows(EvaluationRow.self).map(\.record)
            let flags = flagged[index].targets.compactMap { target -> HubAliasFlag? in
                switch evaluations.first(where: { $0.version == target.version })?.status {
                case .passed?: nil
                case .pending?: HubAliasFlag(version: target.version, status: "pending")
                case .failed?: HubAliasFlag(version: target.version, status: "failed")
                case nil: HubAliasFlag(version: target.version, status: "unevaluated")
                }
            }
            flagged[index].gateFlags = flags.isEmpty ? nil : flags
        }
        return flagged
    }
}
