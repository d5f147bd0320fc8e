/// A number with a fixed count of decimals ("12.30"), the way reports and the tool print them.
///
/// - Parameters:
///   - value: The number.
///   - decimals: The digits after the point.
/// - Returns: The text; non-finite values as Swift prints them.
package func fixedDecimals(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = String(rounded)
    if text.contains("e") {
        return text
    }
    if let dot = text.firstIndex(of: ".") {
        let have = text.distance(from: dot, to: text.endIndex) - 1
        if have < decimals { text += String(repeating: "0", count: decimals - have) }
        if decimals == 0 { text = String(text[..<dot]) }
    } else if decimals > 0 {
        text += "." + String(repeating: "0", count: decimals)
    }
    return text
}
