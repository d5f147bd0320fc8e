/// How ``ModelDownloader/getModel(name:downloadType:conditions:)`` chooses between the local
/// copy and the hub (ML Kit's names).
public enum ModelDownloadType: Sendable {
    /// The local copy if there is one (no network); else download.
    case localModel
    /// The local copy now, and an update fetched in the background (its events tell when it
    /// is in); else download.
    case localModelUpdateInBackground
    /// Ask the hub (`If-None-Match` with the local digest: nothing is downloaded when it is
    /// current). If the hub cannot be reached, a verified local copy is used ("prefer
    /// offline"): a network failure never hides a good model.
    case latestModel
}
