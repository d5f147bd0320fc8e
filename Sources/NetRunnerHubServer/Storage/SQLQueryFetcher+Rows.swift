import SQLKit

/// The store's rows: each column's snake_case name read into the row type's camelCase
/// property (`updated_at` into `updatedAt`), so no row type spells out its coding keys.
extension SQLQueryFetcher {
    /// Every row the query returns, decoded as `Row`.
    func allRows<Row: Decodable>(_ type: Row.Type) async throws -> [Row] {
        try await all(decoding: type, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// The first row the query returns, decoded as `Row`, or `nil` when it returns none.
    func firstRow<Row: Decodable>(_ type: Row.Type) async throws -> Row? {
        try await first(decoding: type, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
