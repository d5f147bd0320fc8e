import NetRunner
import NetRunnerImage
import NetRunnerSupport

/// The OpenAPI 3 description of the native API (`/v1`), the health probes and Triton's model
/// configuration, repository index, model control and statistics.
///
/// Served at `/openapi.json`, so clients can be generated and the server fuzzed against its own
/// contract (schemathesis in the tests). Its paths are the routes' (``InferenceServer``'s route
/// list): each route names its operation here, or says where else it is described (KServe v2's
/// own specification describes metadata, readiness and infer).
enum OpenAPIDocument {
    /// The document without its paths (the routes add them, `RouteList.openAPIDocument`), each
    /// registered task's results described by its definition's schema
    /// (``VisionTaskDefinition/resultsSchema``): the document says what the server answers,
    /// whatever tasks are registered.
    ///
    /// - Parameter tasks: The tasks the server runs (one look at the registry for the whole
    ///   document).
    /// - Returns: The document's JSON text.
    static func base(tasks: [any VisionTaskDefinition]) -> String {
        let results = tasks.map { "\"\($0.kind.rawValue)\": \($0.resultsSchema)" }.joined(separator: ",\n")
        // Each task's own answer options (a segmenter's mask) as parameters the routes name.
        let parameters = AnswerOptions.taskOptions(of: tasks).map { option in
            let parameter = QueryParameter(
                name: option.name, description: option.description, schema: .init(enum: option.values))
            let json = (try? JSONCoding.encoder().encode(parameter)).map { String(decoding: $0, as: UTF8.self) }
            return "\"\(option.name)\": \(json ?? "{}"),\n"
        }
        return template.replacing(resultsPlaceholder, with: "{\n" + results + "\n}")
            .replacing(parametersPlaceholder, with: parameters.joined())
    }

    /// Where ``base(tasks:)`` puts the tasks' results schemas.
    private static let resultsPlaceholder = "\"@inference_results@\""
    /// Where ``base(tasks:)`` puts the tasks' own answer options, a parameter each.
    private static let parametersPlaceholder = "\"@task_parameters@\"\n"
    /// Where ``operations(tasks:)`` names them in the task routes and album runs.
    private static let parameterReferencesPlaceholder = "\"@task_parameter_refs@\""

    /// A query parameter of a task's own answer option, with the values it takes.
    private struct QueryParameter: Encodable {
        struct Schema: Encodable {
            var type = "string"
            var `enum`: [String]
        }
        var name: String
        var `in` = "query"
        var description: String
        var schema: Schema
    }

    private static let template = #"""
        {
          "openapi": "3.0.3",
          "info": {"title": "netrunner serve", "version": "\#(BuildVersion.release)",
            "description": "Run TensorFlow Lite vision models: the native API. Answers are results lines (docs/results-line.schema.json)."},
          "components": {
            "parameters": {
              "id": {"name": "id", "in": "path", "required": true,
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"}},
              "maxResults": {"name": "maxResults", "in": "query",
                "schema": {"type": "integer", "minimum": 1, "maximum": 10000}},
              "scoreThreshold": {"name": "scoreThreshold", "in": "query",
                "schema": {"type": "number", "minimum": 0, "maximum": 1}},
              "preview": {"name": "preview", "in": "query", "description": "1: add what the model saw (input).",
                "schema": {"type": "string", "enum": ["0", "1", "true", "false"]}},
              "categoryAllowlist": {"name": "categoryAllowlist", "in": "query", "schema": {"type": "string"}},
              "categoryDenylist": {"name": "categoryDenylist", "in": "query", "schema": {"type": "string"}},
              "@task_parameters@"
              "name": {"name": "name", "in": "path", "required": true,
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"}},
              "version": {"name": "version", "in": "path", "required": true,
                "description": "Each model has one version, 1; another is a 404.", "schema": {"type": "string"}},
              "album": {"name": "album", "in": "path", "required": true,
                "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,63}$"}},
              "max": {"name": "max", "in": "query",
                "description": "The rendering's longest side at most, in pixels (2048 by default); a smaller photo keeps its size.",
                "schema": {"type": "integer", "minimum": 1, "maximum": 2048}}
            },
            "requestBodies": {
              "Image": {"required": true, "content": {
                "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
                "image/png": {"schema": {"type": "string", "format": "binary"}},
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                "multipart/form-data": {"schema": {"type": "object",
                  "properties": {"image": {"type": "string", "format": "binary"}}}}}}
            },
            "responses": {
              "KServeError": {"description": "KServe's error.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}}}},
              "RepositoryIndex": {"description": "Every model served, in order, with its state.", "content": {
                "application/json": {"schema": {"type": "array", "items": {"type": "object",
                  "required": ["name", "version", "state", "reason"], "properties": {"name": {"type": "string"},
                  "version": {"type": "string"}, "state": {"type": "string", "enum": ["READY", "LOADING", "UNAVAILABLE", "UNKNOWN"]},
                  "reason": {"type": "string"}}}}}}},
              "ModelStatistics": {"description": "Triton's statistics: counts and cumulative nanoseconds per stage.",
                "content": {"application/json": {"schema": {"type": "object", "required": ["model_stats"], "properties": {
                  "model_stats": {"type": "array", "items": {"type": "object",
                    "required": ["name", "version", "last_inference", "inference_count", "execution_count", "inference_stats"],
                    "properties": {"name": {"type": "string"}, "version": {"type": "string"},
                      "last_inference": {"type": "integer", "description": "Milliseconds since 1970; 0: none yet."},
                      "inference_count": {"type": "integer"}, "execution_count": {"type": "integer"},
                      "inference_stats": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/StageStatistics"}},
                      "batch_stats": {"type": "array", "items": {"type": "object"}}}}}}}}}},
              "Answer": {"description": "A results line; a segmenter asked with Accept: image/png answers its category mask as a grayscale PNG (each pixel's value its class index), at the model's output resolution unless mask=image, the image's size in Image-Width and Image-Height.",
                "headers": {
                  "Image-Width": {"description": "With a PNG mask: the image's width (the mask's is the PNG's).", "schema": {"type": "integer"}},
                  "Image-Height": {"description": "With a PNG mask: the image's height.", "schema": {"type": "integer"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResultLine"}},
                  "image/png": {"schema": {"type": "string", "format": "binary"}}}},
              "Rendering": {"description": "The photo as a JPEG, upright (its EXIF orientation applied), its longest side at most max; the photo's own size, which answers' coordinates are in, in Image-Width and Image-Height.",
                "headers": {
                  "Image-Width": {"description": "The photo's width, upright.", "schema": {"type": "integer"}},
                  "Image-Height": {"description": "The photo's height, upright.", "schema": {"type": "integer"}}},
                "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}}},
              "Error": {"description": "What went wrong, for a person.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["error", "error_description"],
                "properties": {"error": {"type": "boolean"}, "error_description": {"type": "string"}}}}}}
            },
            "schemas": {
              "ModelConfig": {"type": "object",
                "required": ["name", "platform", "backend", "max_batch_size", "input", "output"],
                "properties": {"name": {"type": "string"}, "platform": {"type": "string"}, "backend": {"type": "string"},
                  "max_batch_size": {"type": "integer"}, "version_policy": {"type": "object"},
                  "instance_group": {"type": "array", "items": {"type": "object"}},
                  "input": {"type": "array", "items": {"$ref": "#/components/schemas/TensorConfig"}},
                  "output": {"type": "array", "items": {"$ref": "#/components/schemas/TensorConfig"}}}},
              "StageStatistics": {"type": "object", "required": ["count", "ns"], "properties": {
                "count": {"type": "integer", "minimum": 0}, "ns": {"type": "integer", "minimum": 0}}},
              "TensorConfig": {"type": "object", "required": ["name", "data_type", "dims"], "properties": {
                "name": {"type": "string"}, "data_type": {"type": "string", "pattern": "^TYPE_[A-Z0-9]+$"},
                "format": {"type": "string"}, "dims": {"type": "array", "items": {"type": "integer"}},
                "is_shape_tensor": {"type": "boolean"}}},
              "Stream": {"type": "object",
                "required": ["name", "source", "model", "state", "received", "inferred", "dropped_while_busy", "dropped_by_interval", "reconnections", "restarts"],
                "properties": {"name": {"type": "string"}, "source": {"type": "string"}, "model": {"type": "string"},
                  "state": {"type": "string"}, "problem": {"type": "string"}, "frame": {"type": "integer"},
                  "timestamp_ms": {"type": "number"}, "result": {"$ref": "#/components/schemas/ResultLine"},
                  "received": {"type": "integer"}, "inferred": {"type": "integer"},
                  "dropped_while_busy": {"type": "integer"}, "dropped_by_interval": {"type": "integer"},
                  "reconnections": {"type": "integer"}, "restarts": {"type": "integer"}}},
              "ResultLine": {"type": "object", "required": ["image", "error"], "properties": {
                "image": {"type": "string"}, "model": {"type": "string"}, "error": {"type": "boolean"},
                "error_description": {"type": "string"}, "image_width": {"type": "integer"},
                "image_height": {"type": "integer"}, "decode_latency": {"type": "number"},
                "preprocessor_latency": {"type": "number"}, "inference_latency": {"type": "number"},
                "total_latency": {"type": "number"},
                "input": {"type": "string", "description": "With preview=1: what the model saw, a PNG data URL."},
                "skeleton": {"type": "array", "description": "Pose: the bones, pairs of indices into inference_results.pose.",
                  "items": {"type": "array", "items": {"type": "integer"}}},
                "inference_results": {"type": "object", "properties": \#(resultsPlaceholder)}}},
              "Import": {"type": "object", "required": ["id", "source", "state", "received_bytes"], "properties": {
                "id": {"type": "string"}, "source": {"type": "string"},
                "state": {"type": "string", "enum": ["downloading", "unpacking", "validating", "installing", "installed", "failed"]},
                "received_bytes": {"type": "integer"}, "total_bytes": {"type": "integer"}, "error": {"type": "string"},
                "model": {"$ref": "#/components/schemas/Model"}}},
              "AlbumRun": {"type": "object", "required": ["id", "album", "model", "state", "total", "done", "failed", "offset", "results"],
                "properties": {"id": {"type": "string"}, "album": {"type": "string"}, "model": {"type": "string"},
                  "state": {"type": "string", "enum": ["running", "finished"]}, "total": {"type": "integer"},
                  "done": {"type": "integer"}, "failed": {"type": "integer"}, "offset": {"type": "integer"},
                  "latency": {"type": "object", "description": "The answered photos' latency per stage, as bulk and evaluate summarise theirs.",
                    "properties": {"decode": {"$ref": "#/components/schemas/LatencySummary"},
                      "preprocess": {"$ref": "#/components/schemas/LatencySummary"},
                      "inference": {"$ref": "#/components/schemas/LatencySummary"},
                      "total": {"$ref": "#/components/schemas/LatencySummary"}}},
                  "results": {"type": "array", "items": {"type": "object", "required": ["index", "result"], "properties": {
                    "index": {"type": "integer"}, "result": {"$ref": "#/components/schemas/ResultLine"}}}}}},
              "LatencySummary": {"type": "object", "description": "Milliseconds.",
                "required": ["count", "warmUpExcluded", "totalMilliseconds", "mean", "standardDeviation", "min", "median", "p90", "p99", "max"],
                "properties": {"count": {"type": "integer"}, "warmUpExcluded": {"type": "integer"},
                  "totalMilliseconds": {"type": "number"}, "mean": {"type": "number"}, "standardDeviation": {"type": "number"},
                  "min": {"type": "number"}, "median": {"type": "number"}, "p90": {"type": "number"}, "p99": {"type": "number"},
                  "max": {"type": "number"}}},
              "Model": {"type": "object", "required": ["id", "name", "type", "task", "origin", "state"], "properties": {
                "id": {"type": "string"}, "name": {"type": "string"}, "type": {"type": "string"},
                "task": {"type": "string", "description": "A registered task: classification, detection, pose, segmentation, ..."},
                "verb": {"type": "string", "description": "Its route, POST /v1/models/{id}/<verb>: classify, detect, pose, segment, ..."},
                "origin": {"type": "string"},
                "state": {"type": "string", "enum": ["loading", "ready", "failed", "unloaded"]}, "reason": {"type": "string"},
                "inputs": {"type": "array", "items": {"type": "object"}}, "outputs": {"type": "array", "items": {"type": "object"}},
                "preprocessing": {"type": "object"}, "labels": {"type": "integer"}}}
            }
          }
        }
        """#

    /// Each operation by its `operationId`: a route names the one it answers.
    ///
    /// A registered task's route (`classify`, `detect`, ...) is ``taskOperation``, by the task's verb.
    ///
    /// - Parameter tasks: The tasks the routes were made for (one look at the registry for both
    ///   this and ``base(tasks:)``: a task registered in between would make them disagree).
    /// - Returns: The operations, as a JSON object.
    static func operations(tasks: [any VisionTaskDefinition]) -> String {
        let routes = tasks.map { "\"\($0.verb)\": \(taskOperation)," }
        let references = AnswerOptions.taskOptions(of: tasks).map {
            ##", {"$ref": "#/components/parameters/\##($0.name)"}"##
        }
        return ("{\n" + routes.joined(separator: "\n") + otherOperations.drop { $0 != "\n" })
            .replacing(parameterReferencesPlaceholder, with: references.joined())
    }

    /// The operation of each task's route, `POST /v1/models/{id}/<verb>`.
    static let taskOperation = #"""
        {"parameters": [{"$ref": "#/components/parameters/id"}, {"$ref": "#/components/parameters/maxResults"},
                {"$ref": "#/components/parameters/scoreThreshold"}, {"$ref": "#/components/parameters/categoryAllowlist"},
                {"$ref": "#/components/parameters/categoryDenylist"}"@task_parameter_refs@",
                {"$ref": "#/components/parameters/preview"}],
              "requestBody": {"$ref": "#/components/requestBodies/Image"},
              "responses": {"200": {"$ref": "#/components/responses/Answer"}, "400": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"},
                "415": {"$ref": "#/components/responses/Error"}, "503": {"$ref": "#/components/responses/Error"}}}
        """#

    /// The types an album's photo is sent as, its file as it is: each format's MIME type, read
    /// from ``ImageFormat``'s table (JPEG, the first, is also a thumbnail's and a rendering's).
    private static let albumImageTypes = ImageFormat.allCases.map {
        "  \"\($0.mimeType)\": {\"schema\": {\"type\": \"string\", \"format\": \"binary\"}},"
    }.joined(separator: "\n")

    /// The operations of the routes that are not a task's.
    private static let otherOperations = #"""
        {
          "listModels": {"responses": {
              "200": {"description": "The models served.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["models"],
                "properties": {"models": {"type": "array", "items": {"$ref": "#/components/schemas/Model"}}}}}}}}},
          "getModel": {"parameters": [{"$ref": "#/components/parameters/id"}],
              "responses": {
                "200": {"description": "The model.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Model"}}}},
                "404": {"$ref": "#/components/responses/Error"}}},
          "run": {"parameters": [{"$ref": "#/components/parameters/id"}],
              "requestBody": {"$ref": "#/components/requestBodies/Image"},
              "responses": {
                "200": {"description": "Every output by its layer name; a detector answers with a results line.",
                  "content": {"application/json": {"schema": {"anyOf": [
                    {"type": "object", "required": ["image", "model", "error", "outputs"],
                      "properties": {"image": {"type": "string"}, "model": {"type": "string"},
                        "error": {"type": "boolean"}, "outputs": {"type": "object"}}},
                    {"$ref": "#/components/schemas/ResultLine"}]}}}},
                "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                "413": {"$ref": "#/components/responses/Error"}, "415": {"$ref": "#/components/responses/Error"},
                "503": {"$ref": "#/components/responses/Error"}}},
          "renderImage": {"description": "A photo in any format the server decodes (HEIC, AVIF, TIFF, WebP...) as a JPEG any browser draws, upright: what the web page shows for a photo the browser cannot decode.",
              "parameters": [{"$ref": "#/components/parameters/max"}],
              "requestBody": {"$ref": "#/components/requestBodies/Image"},
              "responses": {"200": {"$ref": "#/components/responses/Rendering"}, "400": {"$ref": "#/components/responses/Error"},
                "413": {"$ref": "#/components/responses/Error"}, "415": {"$ref": "#/components/responses/Error"},
                "503": {"$ref": "#/components/responses/Error"}}},
          "listIndexes": {"responses": {"200": {"description": "The similarity indexes served (serve --index NAME=FILE).",
                "content": {"application/json": {"schema": {"type": "object", "required": ["indexes"],
                  "properties": {"indexes": {"type": "array", "items": {"type": "object",
                    "required": ["name", "model", "count", "dimension"], "properties": {
                      "name": {"type": "string"}, "model": {"type": "string", "description": "The model that embeds a search's photo."},
                      "count": {"type": "integer"}, "dimension": {"type": "integer"}}}}}}}}}}},
          "searchIndex": {"description": "The photos of an index nearest to a photo, most alike first: the photo is embedded by the index's model, compared with every photo of the index (cosine similarity).",
              "parameters": [{"$ref": "#/components/parameters/name"},
                {"name": "k", "in": "query", "description": "How many photos to answer (5 by default).",
                  "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}],
              "requestBody": {"$ref": "#/components/requestBodies/Image"},
              "responses": {"200": {"description": "The nearest photos.", "content": {"application/json": {"schema": {
                  "type": "object", "required": ["image", "index", "model", "matches"], "properties": {
                    "image": {"type": "string"}, "index": {"type": "string"}, "model": {"type": "string"},
                    "matches": {"type": "array", "items": {"type": "object", "required": ["path", "similarity"],
                      "properties": {"path": {"type": "string"}, "similarity": {"type": "number"}}}},
                    "decode_latency": {"type": "number"}, "preprocessor_latency": {"type": "number"},
                    "inference_latency": {"type": "number"}}}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"},
                "415": {"$ref": "#/components/responses/Error"}, "503": {"$ref": "#/components/responses/Error"}}},
          "listImports": {"responses": {"200": {"description": "The recent imports.",
                "content": {"application/json": {"schema": {"type": "object", "required": ["imports"],
                  "properties": {"imports": {"type": "array", "items": {"$ref": "#/components/schemas/Import"}}}}}}}}},
          "importModel": {"requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
                  "required": ["url"], "properties": {"url": {"type": "string"}, "sha256": {"type": "string"}}}}}},
                "responses": {
                  "202": {"description": "The import started.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Import"}}}},
                  "400": {"$ref": "#/components/responses/Error"}, "403": {"$ref": "#/components/responses/Error"},
                  "413": {"$ref": "#/components/responses/Error"}, "429": {"$ref": "#/components/responses/Error"}}},
          "getImport": {"parameters": [{"$ref": "#/components/parameters/id"}],
              "responses": {
                "200": {"description": "How far the import got.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Import"}}}},
                "404": {"$ref": "#/components/responses/Error"}}},
          "listStreams": {"responses": {"200": {"description": "The streams the server reads (serve --stream).",
              "content": {"application/json": {"schema": {"type": "object", "required": ["streams"],
                "properties": {"streams": {"type": "array", "items": {"$ref": "#/components/schemas/Stream"}}}}}}}}},
          "getStream": {"parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
              "responses": {
                "200": {"description": "The stream's latest answer and counts.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Stream"}}}},
                "404": {"$ref": "#/components/responses/Error"}}},
          "getStreamFrame": {"parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
              "responses": {
                "200": {"description": "The latest answered frame with the answer drawn.", "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}}},
                "404": {"$ref": "#/components/responses/Error"}}},
          "listAlbums": {"responses": {"200": {"description": "The albums.",
              "content": {"application/json": {"schema": {"type": "object", "required": ["albums"],
                "properties": {"albums": {"type": "array", "items": {"type": "object",
                  "required": ["id", "name", "images", "skipped"], "properties": {"id": {"type": "string"},
                  "name": {"type": "string"}, "images": {"type": "integer"}, "skipped": {"type": "integer"}}}}}}}}}}},
          "getAlbum": {"parameters": [{"$ref": "#/components/parameters/album"}],
              "responses": {
                "200": {"description": "The album's images.", "content": {"application/json": {"schema": {"type": "object",
                  "required": ["id", "name", "images"], "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                  "images": {"type": "array", "items": {"type": "object", "required": ["index", "file"],
                    "properties": {"index": {"type": "integer"}, "file": {"type": "string"}}}}}}}}},
                "404": {"$ref": "#/components/responses/Error"}}},
          "getAlbumImage": {"parameters": [{"$ref": "#/components/parameters/album"},
                {"name": "index", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0}},
                {"name": "thumbnail", "in": "query", "schema": {"type": "string"}},
                {"name": "render", "in": "query", "description": "jpeg: the whole photo as a JPEG, upright (for a browser that cannot draw its format); its longest side at most max.",
                  "schema": {"type": "string", "enum": ["jpeg"]}},
                {"$ref": "#/components/parameters/max"}],
              "responses": {
                "200": {"description": "The image as its file holds it, a JPEG thumbnail, or a JPEG rendering (with render=jpeg: the photo's own size in Image-Width and Image-Height).", "content": {
        \#(albumImageTypes)
                  "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                "422": {"$ref": "#/components/responses/Error"}, "503": {"$ref": "#/components/responses/Error"}}},
          "runAlbum": {"parameters": [{"$ref": "#/components/parameters/album"},
                {"name": "model", "in": "query", "required": true, "schema": {"type": "string"}},
                {"$ref": "#/components/parameters/maxResults"}, {"$ref": "#/components/parameters/scoreThreshold"},
                {"$ref": "#/components/parameters/categoryAllowlist"},
                {"$ref": "#/components/parameters/categoryDenylist"}"@task_parameter_refs@"],
              "responses": {
                "202": {"description": "The run started.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AlbumRun"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                "429": {"$ref": "#/components/responses/Error"}, "503": {"$ref": "#/components/responses/Error"}}},
          "getAlbumRun": {"parameters": [{"$ref": "#/components/parameters/id"},
                {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 10000}}],
              "responses": {
                "200": {"description": "Progress and results.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AlbumRun"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}},
          "live": {"responses": {"200": {"description": "The server runs."}}},
          "ready": {"responses": {
              "200": {"description": "Every model is loaded and warmed up."},
              "503": {"description": "Still loading."}}},
          "modelConfig": {"parameters": [{"name": "name", "in": "path", "required": true,
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"}}],
              "responses": {
                "200": {"description": "Triton's model configuration (model_config.proto's ModelConfig as JSON).",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ModelConfig"}}}},
                "404": {"$ref": "#/components/responses/KServeError"}, "503": {"$ref": "#/components/responses/KServeError"}}},
          "repositoryIndex": {"requestBody": {"required": false, "content": {"application/json": {"schema": {"type": "object",
                  "properties": {"ready": {"type": "boolean"}}}}}},
                "responses": {"200": {"$ref": "#/components/responses/RepositoryIndex"},
                  "400": {"$ref": "#/components/responses/KServeError"}, "413": {"$ref": "#/components/responses/KServeError"}}},
          "repositoryIndexAll": {"responses": {"200": {"$ref": "#/components/responses/RepositoryIndex"}}},
          "loadModel": {"description": "Triton's explicit model control: serves the model again, read anew, or from the models folder.",
              "parameters": [{"$ref": "#/components/parameters/name"}],
              "requestBody": {"required": false, "content": {"application/json": {"schema": {"type": "object"}}}},
              "responses": {"200": {"description": "The model is loaded and ready."},
                "400": {"$ref": "#/components/responses/KServeError"}, "404": {"$ref": "#/components/responses/KServeError"},
                "413": {"$ref": "#/components/responses/KServeError"}, "503": {"$ref": "#/components/responses/KServeError"}}},
          "unloadModel": {"description": "Stops serving the model (UNAVAILABLE, reason unloaded); its files stay.",
              "parameters": [{"$ref": "#/components/parameters/name"}],
              "requestBody": {"required": false, "content": {"application/json": {"schema": {"type": "object"}}}},
              "responses": {"200": {"description": "The model is unloaded."},
                "400": {"$ref": "#/components/responses/KServeError"}, "404": {"$ref": "#/components/responses/KServeError"},
                "413": {"$ref": "#/components/responses/KServeError"}}},
          "allModelStatistics": {"responses": {"200": {"$ref": "#/components/responses/ModelStatistics"}}},
          "modelStatistics": {"parameters": [{"$ref": "#/components/parameters/name"}],
              "responses": {"200": {"$ref": "#/components/responses/ModelStatistics"},
                "404": {"$ref": "#/components/responses/KServeError"}}},
          "modelConfigVersion": {"parameters": [{"$ref": "#/components/parameters/name"}, {"$ref": "#/components/parameters/version"}],
              "responses": {"200": {"description": "Triton's model configuration of the one version, 1.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ModelConfig"}}}},
                "404": {"$ref": "#/components/responses/KServeError"}, "503": {"$ref": "#/components/responses/KServeError"}}},
          "modelStatisticsVersion": {"parameters": [{"$ref": "#/components/parameters/name"}, {"$ref": "#/components/parameters/version"}],
              "responses": {"200": {"$ref": "#/components/responses/ModelStatistics"}, "404": {"$ref": "#/components/responses/KServeError"}}}
        }
        """#
}
