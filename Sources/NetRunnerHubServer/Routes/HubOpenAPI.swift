/// The OpenAPI 3 description of the hub's API, served at `/openapi.json`.
///
/// Clients can be generated from it and the hub fuzzed against its own contract (schemathesis
/// in the tests). Its paths
/// are the routes' (``HubRoutes``): each route names its operation here.
enum HubOpenAPI {
    /// The document without its paths: the routes add them (`RouteList.openAPIDocument`).
    static let base = #"""
        {
          "openapi": "3.0.3",
          "info": {"title": "netrunner hub", "version": "0.1.0",
            "description": "A self-hosted model hub: versions, aliases with history and rollout, verified downloads."},
          "components": {
            "securitySchemes": {"key": {"type": "http", "scheme": "bearer"}},
            "parameters": {
              "name": {"name": "name", "in": "path", "required": true,
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$"}},
              "alias": {"name": "alias", "in": "path", "required": true,
                "schema": {"type": "string", "pattern": "^(?!latest$)(?![0-9]+$)[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$"}},
              "version": {"name": "version", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 2147483647}}
            },
            "headers": {
              "VersionLocation": {"description": "The version the reference resolves to: /v1/models/{name}/versions/{version}.",
                "required": true, "schema": {"type": "string", "pattern": "^/v1/models/[A-Za-z0-9._-]+/versions/[0-9]+$"}}
            },
            "responses": {
              "Error": {"description": "What went wrong, for a person.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["error", "error_description"],
                "properties": {"error": {"type": "boolean"}, "error_description": {"type": "string"}}}}}}
            },
            "schemas": {
              "Target": {"type": "object", "required": ["version", "weight"],
                "properties": {"version": {"type": "integer", "minimum": 1, "maximum": 2147483647},
                  "weight": {"type": "integer", "minimum": 1, "maximum": 100}}},
              "Version": {"type": "object",
                "required": ["name", "version", "sha256", "size", "format", "task", "model_id", "description", "created_at", "created_by"],
                "properties": {"name": {"type": "string"}, "version": {"type": "integer"}, "sha256": {"type": "string"},
                  "size": {"type": "integer"}, "format": {"type": "string", "enum": ["zip", "tflite"]},
                  "task": {"type": "string"}, "model_id": {"type": "string"}, "description": {"type": "string"},
                  "created_at": {"type": "string"}, "created_by": {"type": "string"}}},
              "Alias": {"type": "object", "required": ["name", "alias", "targets", "updated_at", "updated_by"],
                "properties": {"name": {"type": "string"}, "alias": {"type": "string"},
                  "targets": {"type": "array", "items": {"$ref": "#/components/schemas/Target"}},
                  "updated_at": {"type": "string"}, "updated_by": {"type": "string"}}},
              "Model": {"type": "object", "required": ["name", "description", "aliases", "created_at"],
                "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                  "latest_version": {"type": "integer"},
                  "versions": {"type": "array", "items": {"$ref": "#/components/schemas/Version"}},
                  "aliases": {"type": "array", "items": {"$ref": "#/components/schemas/Alias"}},
                  "created_at": {"type": "string"}}}
            }
          },
          "security": [{"key": []}, {}]
        }
        """#

    /// Each operation by its `operationId`: a route names the one it answers.
    static let operations = #"""
        {
          "health": {"responses": {"200": {"description": "It runs.",
              "content": {"application/json": {"schema": {"type": "object"}}}}}},
          "listModels": {"parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
              "responses": {"200": {"description": "The models.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["models"],
                "properties": {"models": {"type": "array", "items": {"$ref": "#/components/schemas/Model"}}}}}}},
                "401": {"$ref": "#/components/responses/Error"}}},
          "getModel": {"parameters": [{"$ref": "#/components/parameters/name"}],
              "responses": {"200": {"description": "The model.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Model"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"}}},
          "publish": {"parameters": [{"$ref": "#/components/parameters/name"},
                {"name": "alias", "in": "query", "schema": {"type": "string"}}],
              "requestBody": {"required": true, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
              "responses": {"201": {"description": "Published.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Version"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                "409": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"},
                "422": {"$ref": "#/components/responses/Error"}}},
          "getVersion": {"parameters": [{"$ref": "#/components/parameters/name"}, {"$ref": "#/components/parameters/version"}],
                "responses": {"200": {"description": "The version.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Version"}}}},
                  "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                  "404": {"$ref": "#/components/responses/Error"}}},
          "deleteVersion": {"parameters": [{"$ref": "#/components/parameters/name"}, {"$ref": "#/components/parameters/version"}],
                "responses": {"200": {"description": "Unpublished.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                  "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                  "409": {"$ref": "#/components/responses/Error"}}},
          "getAlias": {"parameters": [{"$ref": "#/components/parameters/name"}, {"$ref": "#/components/parameters/alias"}],
                "responses": {"200": {"description": "The alias.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Alias"}}}},
                  "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                  "404": {"$ref": "#/components/responses/Error"}}},
          "setAlias": {"parameters": [{"$ref": "#/components/parameters/name"}, {"$ref": "#/components/parameters/alias"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "properties": {
                  "version": {"type": "integer", "minimum": 1, "maximum": 2147483647, "nullable": true},
                  "targets": {"type": "array", "minItems": 1, "maxItems": 10, "nullable": true,
                    "items": {"$ref": "#/components/schemas/Target"}}}}}}},
                "responses": {"200": {"description": "Moved.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Alias"}}}},
                  "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                  "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                  "409": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"}}},
          "rollback": {"parameters": [{"$ref": "#/components/parameters/name"}, {"$ref": "#/components/parameters/alias"}],
              "responses": {"200": {"description": "Rolled back.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Alias"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                "409": {"$ref": "#/components/responses/Error"}}},
          "aliasHistory": {"parameters": [{"$ref": "#/components/parameters/name"}, {"$ref": "#/components/parameters/alias"}],
              "responses": {"200": {"description": "Its history.", "content": {"application/json": {"schema": {"type": "object",
                "required": ["history"], "properties": {"history": {"type": "array", "items": {"type": "object"}}}}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"}}},
          "adoption": {"parameters": [{"$ref": "#/components/parameters/name"}],
              "responses": {"200": {"description": "Clients per version.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"}}},
          "resolve": {"parameters": [{"$ref": "#/components/parameters/name"},
                {"name": "ref", "in": "query", "schema": {"type": "string"}},
                {"name": "client", "in": "query", "schema": {"type": "string"}}],
              "responses": {"200": {"description": "What it resolves to.", "content": {"application/json": {"schema": {"type": "object",
                "required": ["name", "reference", "version", "sha256", "size", "format", "download"]}}},
                "headers": {"Content-Location": {"$ref": "#/components/headers/VersionLocation"}}},
                "304": {"description": "Unchanged: the If-None-Match digest is the one.",
                  "headers": {"Content-Location": {"$ref": "#/components/headers/VersionLocation"}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"}}},
          "blob": {"parameters": [{"name": "digest", "in": "path", "required": true, "schema": {"type": "string"}}],
              "responses": {"200": {"description": "The file.", "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
                "206": {"description": "Part of it.", "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
                "304": {"description": "Unchanged."}, "401": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"}, "416": {"description": "No such range."}}},
          "listKeys": {"responses": {"200": {"description": "The keys (names and scopes).",
                "content": {"application/json": {"schema": {"type": "object"}}}},
                "401": {"$ref": "#/components/responses/Error"}, "403": {"$ref": "#/components/responses/Error"}}},
          "createKey": {"requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
                  "required": ["name", "scope"], "properties": {"name": {"type": "string"},
                  "scope": {"type": "string", "enum": ["read", "publish", "admin"]}}}}}},
                "responses": {"201": {"description": "The key, shown once.", "content": {"application/json": {"schema": {"type": "object",
                  "required": ["key", "name", "scope"]}}}},
                  "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                  "403": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"}}},
          "deleteKey": {"parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
              "responses": {"200": {"description": "Deleted.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "401": {"$ref": "#/components/responses/Error"}, "403": {"$ref": "#/components/responses/Error"},
                "404": {"$ref": "#/components/responses/Error"}}}
        }
        """#
}
