import FoundationEssentials
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// When a model may be downloaded: ML Kit's conditions, each with a meaning that holds on Linux.
///
/// - `allowsCellularAccess`: `false` refuses a metered connection, as NetworkManager marks it
///   (`nmcli -t -f GENERAL.METERED device show` says `yes`); without NetworkManager no
///   connection is known to be metered, and the condition holds.
/// - `requiresACPower`: a machine with a battery must be on mains power
///   (`/sys/class/power_supply/*/online` of a `Mains` supply is 1); a machine without a
///   battery always is.
/// - `allowedHours`: the local hours a download may start in, such as from 1 to 5 (wrapping
///   past midnight allowed: from 22 to 6).
/// - `maximumBytesPerSecond`: a bandwidth cap the download keeps to.
///
/// `allowsBackgroundDownloading` (ML Kit's other flag) has no Linux meaning apart from
/// ``ModelDownloadType/localModelUpdateInBackground``, so it is not offered.
public struct ModelDownloadConditions: Equatable, Sendable {
    /// Local hours, from `start` (included) to `end` (excluded), wrapping past midnight when
    /// `end` is smaller.
    public struct HourWindow: Equatable, Sendable {
        /// The first hour (0 to 23).
        public var start: Int
        /// The hour it ends at (1 to 24; smaller than `start` to wrap).
        public var end: Int

        /// A window of hours.
        public init(start: Int, end: Int) {
            self.start = start
            self.end = end
        }

        /// Whether an hour of the day falls in it.
        public func contains(_ hour: Int) -> Bool {
            start <= end ? (start..<end).contains(hour) : (hour >= start || hour < end)
        }
    }

    /// Whether a metered connection (NetworkManager's `GENERAL.METERED`) may be used.
    public var allowsCellularAccess: Bool
    /// Whether the machine must be on mains power when it has a battery.
    public var requiresACPower: Bool
    /// The local hours a download may start in, if limited.
    public var allowedHours: HourWindow?
    /// A bandwidth cap, if any.
    public var maximumBytesPerSecond: Int?
    /// Where power supplies are read (for tests; default `/sys/class/power_supply`).
    public var powerSupplyFolder = "/sys/class/power_supply"

    /// Creates conditions; the defaults allow any download at any time.
    public init(
        allowsCellularAccess: Bool = true, requiresACPower: Bool = false, allowedHours: HourWindow? = nil,
        maximumBytesPerSecond: Int? = nil
    ) {
        self.allowsCellularAccess = allowsCellularAccess
        self.requiresACPower = requiresACPower
        self.allowedHours = allowedHours
        self.maximumBytesPerSecond = maximumBytesPerSecond
    }

    /// Why a download may not start now, or `nil` when every condition holds.
    public func unmetReason() -> String? {
        if let hours = allowedHours {
            var now = time(nil)
            var parts = tm()
            localtime_r(&now, &parts)
            let hour = Int(parts.tm_hour)
            if !hours.contains(hour) {
                // The clock as it is (22:28, not 22:00).
                let now = "\(hour):" + (parts.tm_min < 10 ? "0" : "") + "\(parts.tm_min)"
                return "downloads are allowed from \(hours.start):00 to \(hours.end):00; it is \(now)"
            }
        }
        if requiresACPower, let onMains = Self.onMainsPower(folder: powerSupplyFolder), !onMains {
            return "the machine runs on battery and the conditions require mains power"
        }
        if !allowsCellularAccess, Self.isMetered() {
            return "the connection is metered (NetworkManager) and the conditions do not allow it"
        }
        return nil
    }

    /// `true` on mains, `false` on battery, `nil` when the machine has no battery (always powered).
    static func onMainsPower(folder: String) -> Bool? {
        let supplies = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var hasBattery = false
        var mainsOnline = false
        for supply in supplies {
            let read = { (file: String) in
                (try? FileIO.contents(of: "\(folder)/\(supply)/\(file)", maximumSize: 256))
                    .map { String(decoding: $0, as: UTF8.self).filter { !$0.isWhitespace } }
            }
            switch read("type") {
            case "Battery": hasBattery = true
            case "Mains": if read("online") == "1" { mainsOnline = true }
            default: break
            }
        }
        return hasBattery ? mainsOnline : nil
    }

    /// Whether NetworkManager says the connection in use is metered.
    static func isMetered() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/nmcli"),
            let pipe = popen("/usr/bin/nmcli -t -f GENERAL.METERED device show 2>/dev/null", "r")
        else { return false }
        defer { pclose(pipe) }
        var text = ""
        var buffer = [CChar](repeating: 0, count: 256)
        while fgets(&buffer, Int32(buffer.count), pipe) != nil {
            text += String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return text.contains("METERED:yes")
    }
}
