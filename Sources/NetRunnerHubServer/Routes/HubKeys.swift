import FoundationEssentials
import NetRunnerSupport

/// API keys: random, shown once, stored as their SHA-256 only.
enum HubKeys {
    /// A new key: `nrh_` and 32 random bytes in hex.
    static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return "nrh_" + SHA256.hex((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The digest a key is stored under.
    static func digest(of key: String) -> String {
        SHA256.hexDigest(of: Data(key.utf8))
    }
}
