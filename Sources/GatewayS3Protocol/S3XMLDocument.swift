public import Foundation
import GatewayServeRequests

/// Why an S3 answer's XML was refused.
public struct S3XMLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, for an error message.
    public var description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// An S3 answer's XML body in the flat shape every S3 answer has: a root element whose children
/// are either values (`<IsTruncated>true</IsTruncated>`) or records of values
/// (`<Contents><Key>a</Key><Size>3</Size></Contents>`, `<CommonPrefixes>`, `<Part>`, `<Upload>`,
/// `<Version>`, `<Deleted>`). A record's nested values are named by their path (`Owner.ID`).
/// Namespaces are ignored (AWS uses `http://s3.amazonaws.com/doc/2006-03-01/`, error bodies none).
///
/// Read by libxml2's SAX2 parser (``XMLEventReader``: no DTD, no entities, nothing from the
/// network), with bounds a hostile server cannot pass: nesting, distinct names, records and the
/// length of each value. The caller bounds the body's size.
public struct S3XMLDocument: Sendable, Equatable {
    /// One record: a child of the root with values of its own.
    public struct Record: Sendable, Equatable {
        /// Its element name (`Contents`).
        public var name: String
        /// Its values by (dotted) name; the last one wins.
        public var values: [String: String]
    }

    /// The root element's name (`ListBucketResult`, `Error`, ...).
    public var root: String
    /// The root's value children by name; the last one wins.
    public var values: [String: String]
    /// The root's record children, in document order.
    public var records: [Record]

    /// The most records one answer may hold (a page of S3 has at most 1,000 keys and 1,000 prefixes).
    public static let maximumRecords = 10_000
    /// The longest value kept (keys are at most 1,024 bytes; tokens a few hundred).
    public static let maximumValueLength = 64 << 10
    /// The deepest nesting: S3's answers are 4 levels deep.
    public static let maximumDepth = 16
    /// The most distinct element names.
    public static let maximumNames = 500

    /// Parses `data`.
    public static func parse(_ data: Data) throws(S3XMLError) -> S3XMLDocument {
        let builder = Builder()
        do {
            try XMLEventReader.read(data, maximumDepth: maximumDepth, into: builder)
        } catch {
            throw S3XMLError(error.description)
        }
        if builder.overflow { throw S3XMLError("more than \(maximumRecords) records") }
        return S3XMLDocument(root: builder.root, values: builder.values, records: builder.records)
    }

    /// The records named `name`.
    public func records(named name: String) -> [Record] { records.filter { $0.name == name } }

    private final class Builder: XMLEventHandler {
        var root = ""
        var values: [String: String] = [:]
        var records: [Record] = []
        var names: Set<String> = []
        /// The open elements below the root's child (their names), while a child is open.
        var stack: [String] = []
        var record: Record?
        var childHasChildren = false
        var text = ""

        func start(_ element: PropertyName, attributes: [XMLAttribute], depth: Int) throws(XMLEventReader.Failure) {
            if overflow { throw .init("more than \(S3XMLDocument.maximumRecords) records") }
            if !names.contains(element.name) {
                guard names.count < S3XMLDocument.maximumNames else { throw .init("more than \(S3XMLDocument.maximumNames) element names") }
                names.insert(element.name)
            }
            switch depth {
            case 0:
                root = element.name
            case 1:
                record = Record(name: element.name, values: [:])
                childHasChildren = false
                stack = []
            default:
                childHasChildren = true
                stack.append(element.name)
            }
            text = ""
        }

        func end(_ element: PropertyName, depth: Int) {
            switch depth {
            case 1:
                guard let record else { return }
                if childHasChildren {
                    if records.count < S3XMLDocument.maximumRecords { records.append(record) } else { overflow = true }
                } else {
                    values[element.name] = text
                }
                self.record = nil
            case 2...:
                if !stack.isEmpty {
                    record?.values[stack.joined(separator: "."), default: ""] += text
                    stack.removeLast()
                }
            default:
                break
            }
            text = ""
        }

        var overflow = false

        func text(_ piece: String) throws(XMLEventReader.Failure) {
            guard text.utf8.count + piece.utf8.count <= S3XMLDocument.maximumValueLength else {
                throw .init("a value longer than \(S3XMLDocument.maximumValueLength) bytes")
            }
            text += piece
        }
    }
}

/// An S3 error answer (`<Error><Code>NoSuchKey</Code><Message>…</Message></Error>`).
public struct S3ErrorBody: Sendable, Equatable {
    /// The error code (`NoSuchKey`, `AccessDenied`, `SignatureDoesNotMatch`, ...).
    public var code: String
    /// The server's message.
    public var message: String?

    /// The error in `data`, or `nil` when it holds no S3 error document.
    public init?(_ data: Data) {
        guard !data.isEmpty, let document = try? S3XMLDocument.parse(data), document.root == "Error" else { return nil }
        self.init(document)
    }

    /// The error a parsed document describes, or `nil` when its root is not `Error`.
    public init?(_ document: S3XMLDocument) {
        guard document.root == "Error", let code = document.values["Code"], !code.isEmpty else { return nil }
        self.code = String(code.prefix(200))
        self.message = document.values["Message"].map { String($0.prefix(500)) }
    }
}

/// One page of a `ListObjectsV2` answer.
public struct S3ListPage: Sendable, Equatable {
    /// An object.
    public struct Object: Sendable, Equatable {
        public var key: String
        public var size: Int64
        /// `LastModified` as sent (ISO 8601).
        public var lastModified: String?
        public var etag: String?
        public var storageClass: String?
    }

    /// The objects, in key order.
    public var objects: [Object]
    /// The common prefixes (folders, with the delimiter at the end).
    public var prefixes: [String]
    /// Whether more pages follow.
    public var isTruncated: Bool
    /// The token of the next page.
    public var continuationToken: String?

    /// The page in `document`. With `EncodingType` `url` in the answer, keys and prefixes are
    /// decoded. Objects with a negative or unreadable size, or keys that do not decode, are refused.
    public init(_ document: S3XMLDocument) throws(S3XMLError) {
        guard document.root == "ListBucketResult" else {
            throw S3XMLError("expected a ListBucketResult, got \(document.root.isEmpty ? "nothing" : document.root.prefix(80))")
        }
        let encoded = document.values["EncodingType"]?.lowercased() == "url"
        func key(_ text: String?) throws(S3XMLError) -> String {
            guard let text else { throw S3XMLError("a listed object without a Key") }
            guard encoded else { return text }
            guard let decoded = S3URIEncoding.decode(text, plusAsSpace: true) else { throw S3XMLError("a key that does not URL-decode") }
            return decoded
        }
        objects = []
        prefixes = []
        for record in document.records {
            switch record.name {
            case "Contents":
                let sizeText = record.values["Size"]?.trimmingCharacters(in: .whitespaces) ?? ""
                guard let size = Int64(sizeText), size >= 0 else {
                    throw S3XMLError("an object with the size \"\(sizeText.prefix(40))\"")
                }
                objects.append(Object(key: try key(record.values["Key"]), size: size, lastModified: record.values["LastModified"],
                                      etag: record.values["ETag"], storageClass: record.values["StorageClass"]))
            case "CommonPrefixes":
                prefixes.append(try key(record.values["Prefix"]))
            default:
                continue
            }
        }
        isTruncated = document.values["IsTruncated"]?.trimmingCharacters(in: .whitespaces).lowercased() == "true"
        continuationToken = document.values["NextContinuationToken"].flatMap { $0.isEmpty ? nil : $0 }
        if isTruncated && continuationToken == nil {
            throw S3XMLError("a truncated listing without a NextContinuationToken")
        }
    }
}

/// One page of a `ListObjectVersions` answer (`ListVersionsResult`): every version of every key
/// below a prefix, newest first for each key, delete markers among them.
public struct S3VersionsPage: Sendable, Equatable {
    /// One version of a key, or a delete marker.
    public struct Version: Sendable, Equatable {
        public var key: String
        /// `VersionId` (`null` for an object written before versioning was turned on).
        public var versionID: String
        /// Whether this is the key's current version.
        public var isLatest: Bool
        /// A delete marker (no content) rather than a version with bytes.
        public var isDeleteMarker: Bool
        /// The size (0 for a delete marker).
        public var size: Int64
        public var etag: String?
    }

    /// The versions and delete markers, in the server's order.
    public var versions: [Version]
    /// Whether more pages follow.
    public var isTruncated: Bool
    /// Where the next page starts: `key-marker` and `version-id-marker`.
    public var nextKeyMarker: String?
    public var nextVersionIDMarker: String?

    /// The page in `document`. With `EncodingType` `url` in the answer, keys are decoded. A
    /// version without a key or a version id, a negative or unreadable size, or a truncated page
    /// with no marker to go on from, is refused.
    public init(_ document: S3XMLDocument) throws(S3XMLError) {
        guard document.root == "ListVersionsResult" else {
            throw S3XMLError("expected a ListVersionsResult, got \(document.root.isEmpty ? "nothing" : document.root.prefix(80))")
        }
        let encoded = document.values["EncodingType"]?.lowercased() == "url"
        func decoded(_ text: String) throws(S3XMLError) -> String {
            guard encoded else { return text }
            guard let decoded = S3URIEncoding.decode(text, plusAsSpace: true) else { throw S3XMLError("a key that does not URL-decode") }
            return decoded
        }
        versions = []
        for record in document.records where record.name == "Version" || record.name == "DeleteMarker" {
            guard let key = record.values["Key"] else { throw S3XMLError("a listed version without a Key") }
            guard let versionID = record.values["VersionId"]?.trimmingCharacters(in: .whitespaces), !versionID.isEmpty else {
                throw S3XMLError("a listed version without a VersionId")
            }
            let marker = record.name == "DeleteMarker"
            var size: Int64 = 0
            if !marker {
                let sizeText = record.values["Size"]?.trimmingCharacters(in: .whitespaces) ?? ""
                guard let value = Int64(sizeText), value >= 0 else { throw S3XMLError("a version with the size \"\(sizeText.prefix(40))\"") }
                size = value
            }
            versions.append(Version(key: try decoded(key), versionID: versionID,
                                    isLatest: record.values["IsLatest"]?.trimmingCharacters(in: .whitespaces).lowercased() == "true",
                                    isDeleteMarker: marker, size: size, etag: record.values["ETag"]))
        }
        isTruncated = document.values["IsTruncated"]?.trimmingCharacters(in: .whitespaces).lowercased() == "true"
        if let marker = document.values["NextKeyMarker"], !marker.isEmpty { nextKeyMarker = try decoded(marker) } else { nextKeyMarker = nil }
        nextVersionIDMarker = document.values["NextVersionIdMarker"].flatMap { $0.isEmpty ? nil : $0 }
        if isTruncated && nextKeyMarker == nil {
            throw S3XMLError("a truncated version listing without a NextKeyMarker")
        }
    }
}

/// A `GetBucketVersioning` answer: whether the bucket keeps every version of its objects.
public enum S3BucketVersioning: Sendable, Equatable {
    /// Versioning is on (`Enabled`): overwritten and deleted objects stay as older versions.
    case enabled
    /// Turned on once and now `Suspended`: new writes replace what was there, but the older
    /// versions and delete markers made while it was on are still in the bucket.
    case suspended
    /// Never turned on.
    case off

    /// The state in `document`: AWS answers a `VersioningConfiguration`, moto (and servers modelled
    /// on it) a `GetBucketVersioningResponse` with the same `Status`; `nil` for another document.
    public init?(_ document: S3XMLDocument) {
        guard document.root == "VersioningConfiguration" || document.root == "GetBucketVersioningResponse" else { return nil }
        switch document.values["Status"]?.trimmingCharacters(in: .whitespaces) {
        case "Enabled": self = .enabled
        case "Suspended": self = .suspended
        default: self = .off
        }
    }
}
