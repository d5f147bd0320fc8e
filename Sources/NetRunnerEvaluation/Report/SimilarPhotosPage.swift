import NetRunnerSupport

/// The page of `netrunner similar duplicates --report`: each group of near-duplicates as a row
/// of pictures, its paths beneath, from file URLs (the page is opened from disk, beside the
/// photos it shows).
package enum SimilarPhotosPage {
    /// The page's HTML.
    ///
    /// - Parameters:
    ///   - groups: Each group's photo paths (relative paths are taken from `folder`).
    ///   - threshold: The similarity the groups are above, for the heading.
    ///   - folder: The folder relative paths start from (the current one).
    /// - Returns: The HTML.
    package static func html(groups: [[String]], threshold: Double, folder: String) -> String {
        var page = HTMLWriter()
        page.raw(
            """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Near-duplicate photos</title>
            <style>body{font:14px system-ui,sans-serif;margin:1.5em}figure{display:inline-block;margin:0 .6em .6em 0;
            vertical-align:top;width:180px}img{max-width:180px;max-height:180px;display:block}figcaption{font-size:11px;
            word-break:break-all;color:#444}section{border-top:1px solid #ccc;padding:.6em 0}</style></head><body>
            """)
        page.element(
            "h1", "\(groups.count) groups of near-duplicates (similarity \(fixedDecimals(threshold, 3)) or more)")
        for (number, group) in groups.enumerated() {
            page.raw("<section>")
            page.element("h2", "Group \(number + 1): \(group.count) photos")
            for path in group {
                let absolute = path.hasPrefix("/") ? path : folder + "/" + path
                let url = "file://" + percentEncoded(absolute)
                page.raw("<figure><img loading=\"lazy\" src=\"\(page.escaped(url))\" alt=\"\">")
                page.element("figcaption", path)
                page.raw("</figure>")
            }
            page.raw("</section>")
        }
        page.raw("</body></html>\n")
        return page.text
    }

    /// A path with every byte outside the URL path's safe set written `%XX`.
    private static func percentEncoded(_ path: String) -> String {
        var result = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "."), UInt8(ascii: "~"):
                result.append(Character(Unicode.Scalar(byte)))
            default:
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
