import CSQLite
import GatewayCore

/// A value bound to, or read from, a SQLite statement.
package enum SQLiteValue: Sendable, Hashable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null

    /// `.integer` for a present value, `.null` otherwise.
    package static func optional(_ value: Int64?) -> SQLiteValue { value.map(SQLiteValue.integer) ?? .null }
    /// `.text` for a present value, `.null` otherwise.
    package static func optional(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
}

/// One SQLite connection: a thin layer over the C API (prepared statements cached by their text).
///
/// Not thread-safe: ``StateStore`` owns it behind a lock.
package final class SQLiteDatabase {
    let handle: OpaquePointer
    /// The database file, for messages.
    package let path: String
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens (creating) the database at `path`.
    init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw FileProviderError.stateStoreUnavailable(path: path, reason: "cannot open: \(message)")
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw error(status, text)
        }
    }

    /// A prepared statement for `sql`, reset and with `values` bound.
    package func statement(_ sql: String, _ values: [SQLiteValue] = []) throws -> SQLiteStatement {
        let statement: SQLiteStatement
        if let cached = statements[sql] {
            statement = cached
            sqlite3_reset(statement.handle)
            sqlite3_clear_bindings(statement.handle)
        } else {
            var handle: OpaquePointer?
            let status = sqlite3_prepare_v2(self.handle, sql, -1, &handle, nil)
            guard status == SQLITE_OK, let handle else { throw error(status, lastMessage) }
            statement = SQLiteStatement(handle: handle, database: self)
            statements[sql] = statement
        }
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let status: Int32
            switch value {
            case .integer(let number): status = sqlite3_bind_int64(statement.handle, position, number)
            case .real(let number): status = sqlite3_bind_double(statement.handle, position, number)
            case .text(let text): status = sqlite3_bind_text(statement.handle, position, text, -1, gateway_sqlite_transient())
            case .null: status = sqlite3_bind_null(statement.handle, position)
            }
            guard status == SQLITE_OK else { throw error(status, lastMessage) }
        }
        return statement
    }

    /// Runs a statement that returns no rows.
    package func run(_ sql: String, _ values: [SQLiteValue] = []) throws {
        let statement = try statement(sql, values)
        while try statement.step() {}
    }

    /// The first column of the first row, as an integer.
    package func integer(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int64? {
        let statement = try statement(sql, values)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.integer(0)
    }

    /// The first column of the first row, as text.
    package func text(_ sql: String, _ values: [SQLiteValue] = []) throws -> String? {
        let statement = try statement(sql, values)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// Runs `body` in an immediate transaction (the write lock is taken at once), committing when it
    /// returns and rolling back when it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The row id of the last `INSERT` on this connection.
    package var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ status: Int32, _ message: String) -> FileProviderError {
        let primary = status & 0xff
        if primary == SQLITE_BUSY || primary == SQLITE_LOCKED {
            return .stateStoreUnavailable(path: path, reason: "locked by another process (\(message))")
        }
        if primary == SQLITE_FULL {
            return .stateStoreUnavailable(path: path, reason: "disk full (\(message))")
        }
        if primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB {
            return .stateStoreUnavailable(path: path, reason: "damaged (\(message)); remove it to start over")
        }
        return .stateStoreUnavailable(path: path, reason: message)
    }
}

/// A prepared statement; rows are read with ``step()`` and the typed column readers.
package final class SQLiteStatement {
    let handle: OpaquePointer
    unowned let database: SQLiteDatabase

    init(handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Advances to the next row: `true` when there is one, `false` when done.
    package func step() throws -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            sqlite3_reset(handle)
            return false
        default:
            let message = database.lastMessage
            sqlite3_reset(handle)
            throw database.error(status, message)
        }
    }

    /// Ends the current use early (so the statement holds no read lock).
    package func reset() { sqlite3_reset(handle) }

    /// Whether column `index` is NULL.
    package func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }
    /// Column `index` as an integer.
    package func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
    /// Column `index` as a floating-point number.
    package func real(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }
    /// Column `index` as an integer, `nil` when NULL.
    package func optionalInteger(_ index: Int32) -> Int64? { isNull(index) ? nil : integer(index) }
    /// Column `index` as text, `nil` when NULL.
    package func text(_ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
