import Synchronization

/// The provider types a program knows, by name. Each program owns its registry; there is no shared
/// global one. `Gateway.makeRegistry()` returns one with the built-in backends registered.
public final class ProviderRegistry: Sendable {
    /// Registering the same type name twice.
    public struct DuplicateTypeError: Error, Sendable, CustomStringConvertible {
        /// The type name.
        public var type: String
        public var description: String { "provider type \"\(type)\" is already registered" }
    }

    private let descriptors = Mutex<[String: ProviderDescriptor]>([:])

    /// Creates an empty registry.
    public init() {}

    /// Adds a provider type.
    ///
    /// - Throws: ``DuplicateTypeError`` when the name is taken and `replacing` is `false`.
    public func register(_ descriptor: ProviderDescriptor, replacing: Bool = false) throws {
        try descriptors.withLock { descriptors in
            if !replacing, descriptors[descriptor.type] != nil { throw DuplicateTypeError(type: descriptor.type) }
            descriptors[descriptor.type] = descriptor
        }
    }

    /// The descriptor for a type name.
    public func descriptor(forType type: String) -> ProviderDescriptor? {
        descriptors.withLock { $0[type] }
    }

    /// Registered type names, sorted.
    public var typeNames: [String] { descriptors.withLock { $0.keys.sorted() } }

    /// Registered descriptors, sorted by type.
    public var allDescriptors: [ProviderDescriptor] {
        descriptors.withLock { $0.values.sorted { $0.type < $1.type } }
    }
}
