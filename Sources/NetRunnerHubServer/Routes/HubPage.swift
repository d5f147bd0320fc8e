import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore
import NetRunnerSupport

/// The hub's page at `/`: what ML Kit's console was.
///
/// The models, a model's versions, its aliases with their weights and history, and its
/// adoption per version: one HTML file with its style and script, in the binary (nothing
/// fetched from elsewhere). The page reads the hub's own JSON routes (`/v1/models`,
/// `/v1/models/{name}`, `.../aliases/{alias}/history`, `.../adoption`); on a private hub it
/// asks for a key, kept in the page's memory only and sent as `Authorization: Bearer`, never
/// in an address. With a key entered (publish or admin scope: the hub decides) it also
/// changes the hub through the same API as `netrunner hub`: it uploads a version (`POST
/// .../versions?alias=`, the file as the body), points an alias at one version or several
/// with weights (`PUT .../aliases/{alias}`), rolls an alias back (`POST .../rollback`), and
/// deletes a version (`DELETE .../versions/{version}`, after a confirmation naming the model and
/// the version); without a key those controls are disabled and say a key is needed. With an
/// admin key (`GET /v1/keys` answers, where other keys get 403) a keys section lists the keys
/// (name, scope, date: the hub keeps no secret), makes one (`POST /v1/keys`, its secret shown
/// once with a Copy button) and revokes one (`DELETE /v1/keys/{name}`, after a confirmation).
/// A model's experiments (`.../experiments`, each one's figures from `.../experiments/{id}`) show
/// per variant its figures against the baseline and its relative change's interval drawn (SVG);
/// with a key it starts, stops and concludes them (the hub's 409 shown when the gate refuses).
/// Every string from the hub goes into the page as text (`textContent`), never
/// as markup, and the Content-Security-Policy allows only this script and style (by digest)
/// and requests to the hub itself.
enum HubPage {
    static func response() -> Response {
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-cache",
            .contentSecurityPolicy: policy, .xContentTypeOptions: "nosniff",
        ]
        if let referrer = HTTPField.Name("Referrer-Policy") { headers[referrer] = "no-referrer" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// Only this page's own script and style run; it may ask only the hub.
    static let policy =
        "default-src 'none'; script-src '\(digest(of: "script"))'; style-src '\(digest(of: "style"))'; "
        + "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The page: `Resources/hub.html` with `hub.css` in its style element and `hub.js`, then
    /// `hub-gates.js` and `hub-experiments.js`, in its script element (one file for the browser:
    /// nothing more to fetch or to allow), all compiled into the binary; `make lint` parses the
    /// scripts.
    static let page = String(decoding: PackageResources.hub_html, as: UTF8.self)
        .replacing("{{STYLE}}", with: String(decoding: PackageResources.hub_css, as: UTF8.self))
        .replacing(
            "{{SCRIPT}}",
            with: String(decoding: PackageResources.hub_js, as: UTF8.self) + "\n"
                + String(decoding: PackageResources.hub_gates_js, as: UTF8.self) + "\n"
                + String(decoding: PackageResources.hub_experiments_js, as: UTF8.self))

    /// The CSP source of the page's inline `element` (`style` or `script`): `sha256-` and the
    /// base64 digest of the element's text as served.
    static func digest(of element: String) -> String {
        guard let open = page.firstRange(of: "<\(element)>"),
            let close = page[open.upperBound...].firstRange(of: "</\(element)>")
        else { return "none" }
        let text = page[open.upperBound..<close.lowerBound]
        return "sha256-" + Data(SHA256.digest(of: Data(text.utf8))).base64EncodedString()
    }
}
