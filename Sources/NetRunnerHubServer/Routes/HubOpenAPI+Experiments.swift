/// The experiments' and the events' operations of the OpenAPI document.
extension HubOpenAPI {
    /// ``operations`` and ``experimentOperations`` as one JSON object.
    static var allOperations: String {
        // Each is "{...}" with no space after its last brace: the two bodies joined by a comma.
        guard let end = operations.lastIndex(of: "}"), let start = experimentOperations.firstIndex(of: "{") else {
            return operations
        }
        return String(operations[..<end]) + ","
            + String(experimentOperations[experimentOperations.index(after: start)...])
    }

    /// The experiments' operations by `operationId`.
    static let experimentOperations = #"""
        {
          "startExperiment": {"parameters": [{"$ref": "#/components/parameters/name"}],
              "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
                "required": ["alias", "variants"], "properties": {
                "alias": {"type": "string", "pattern": "^(?!latest$)(?![0-9]+$)[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$"},
                "variants": {"type": "array", "minItems": 2, "maxItems": 10, "items": {"$ref": "#/components/schemas/Target"}},
                "baseline": {"type": "integer", "minimum": 1, "maximum": 2147483647},
                "goal": {"type": "string", "minLength": 1, "maxLength": 64},
                "guardrails": {"type": "object", "properties": {
                  "failure_rate": {"type": "number", "minimum": 0, "maximum": 1000000},
                  "crashes": {"type": "number", "minimum": 0, "maximum": 1000000},
                  "latency_p90_ms": {"type": "number", "minimum": 0, "maximum": 1000000},
                  "goal_floor": {"type": "number", "minimum": 0, "maximum": 1000000}}},
                "mode": {"type": "string", "enum": ["normal", "aa"]},
                "alpha": {"type": "number", "minimum": 0.001, "maximum": 0.2},
                "description": {"type": "string", "maxLength": 500}}}}}},
              "responses": {"201": {"description": "Started: the alias serves the variants by weight.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Experiment"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                "409": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"}}},
          "listExperiments": {"parameters": [{"$ref": "#/components/parameters/name"}],
              "responses": {"200": {"description": "The model's experiments, the newest first.",
                "content": {"application/json": {"schema": {"type": "object", "required": ["experiments"],
                  "properties": {"experiments": {"type": "array", "items": {"$ref": "#/components/schemas/Experiment"}}}}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"}}},
          "getExperiment": {"parameters": [{"$ref": "#/components/parameters/name"},
                {"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 2147483647}}],
              "responses": {"200": {"description": "The experiment, its figures per arm and its history.",
                "content": {"application/json": {"schema": {"type": "object", "required": ["experiment", "analysis", "history"],
                  "properties": {"experiment": {"$ref": "#/components/schemas/Experiment"},
                    "analysis": {"type": "object", "required": ["arms"], "properties": {"arms": {"type": "array", "items": {"type": "object"}}}},
                    "history": {"type": "array", "items": {"type": "object"}}}}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}},
          "stopExperiment": {"parameters": [{"$ref": "#/components/parameters/name"},
                {"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 2147483647}}],
              "responses": {"200": {"description": "Stopped: the alias is back on the baseline.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Experiment"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                "409": {"$ref": "#/components/responses/Error"}}},
          "concludeExperiment": {"parameters": [{"$ref": "#/components/parameters/name"},
                {"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 2147483647}}],
              "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
                "winner": {"type": "integer", "minimum": 1, "maximum": 2147483647}}}}}},
              "responses": {"200": {"description": "Concluded: the winner is the alias's target, through its gate.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Experiment"}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"},
                "409": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"}}},
          "postEvents": {"requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
                "required": ["model", "alias", "events"], "properties": {
                "model": {"type": "string", "pattern": "^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$"},
                "alias": {"type": "string", "pattern": "^(?!latest$)(?![0-9]+$)[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$"},
                "experiment": {"type": "integer", "minimum": 1, "maximum": 2147483647},
                "events": {"type": "array", "minItems": 1, "maxItems": 500, "items": {"type": "object",
                  "required": ["id", "client", "version", "kind"], "properties": {
                  "id": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,64}$"},
                  "client": {"type": "string", "pattern": "^[!-~]{1,200}$"},
                  "version": {"type": "integer", "minimum": 1, "maximum": 2147483647},
                  "kind": {"type": "string", "enum": ["outcome", "inference", "crash"]},
                  "name": {"type": "string", "minLength": 1, "maxLength": 64}, "success": {"type": "boolean"},
                  "value": {"type": "number", "minimum": -1e12, "maximum": 1e12},
                  "latency_ms": {"type": "number", "minimum": 0, "maximum": 3600000},
                  "failed": {"type": "boolean"}}}}}}}}},
              "responses": {"200": {"description": "What was counted: each refused event with why.",
                "content": {"application/json": {"schema": {"type": "object",
                  "required": ["experiment", "accepted", "duplicates", "refused", "stopped"], "properties": {
                  "experiment": {"type": "integer"}, "accepted": {"type": "integer"}, "duplicates": {"type": "integer"},
                  "refused": {"type": "array", "items": {"type": "object", "required": ["id", "reason"]}},
                  "stopped": {"type": "boolean"}}}}}},
                "400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"}, "409": {"$ref": "#/components/responses/Error"},
                "413": {"$ref": "#/components/responses/Error"}}}
        }
        """#
}
