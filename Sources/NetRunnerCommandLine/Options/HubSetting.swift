import ArgumentParser
import NetRunnerSupport

/// The hub `hub:` models and the `hub` commands talk to, when `--hub` is not given:
/// `NETRUNNER_HUB`, else `"hub"` in the settings file (``UserSettings``), else the client's
/// default (`http://127.0.0.1:8090`).
package enum HubSetting {
    /// Where the address comes from without the flag, for help texts.
    package static let precedence =
        "default: NETRUNNER_HUB, else \"hub\" in ~/.config/netrunner/config.json, else http://127.0.0.1:8090"

    /// The address `--hub` stands for when not given.
    ///
    /// - Parameter flag: `--hub`, if given.
    /// - Returns: The flag, else the environment's or the settings file's address, else `nil`
    ///   (the client's default).
    /// - Throws: `ValidationError` when the settings file cannot be used.
    package static func address(flag: String?) throws -> String? {
        if let flag { return flag }
        do {
            return try UserSettings.value(.hub)?.value
        } catch {
            throw ValidationError(error.description)
        }
    }
}
