import CLibXML2
package import Foundation

/// An attribute as the reader reports it: its namespaced name and value.
package struct XMLAttribute: Sendable, Equatable {
    package var name: PropertyName
    package var value: String
}

/// What an ``XMLEventReader`` reports, in document order. Throwing from ``start(_:attributes:)``
/// stops the parse with that reason.
package protocol XMLEventHandler: AnyObject {
    /// An element starts, `depth` elements deep (the root is 0).
    func start(_ element: PropertyName, attributes: [XMLAttribute], depth: Int) throws(XMLEventReader.Failure)
    /// The element opened at `depth` ends.
    func end(_ element: PropertyName, depth: Int)
    /// Character data (CDATA included), possibly in several pieces.
    func text(_ text: String) throws(XMLEventReader.Failure)
}

/// A small XML request body (a WebDAV `propfind`, `propertyupdate` or `lockinfo`) read as events
/// by libxml2's SAX2 parser, namespaces resolved.
///
/// Hostile bodies get a clear failure, never work or memory out of proportion: a document type
/// (and with it every entity) is refused, nothing is loaded from the network, nesting is bounded,
/// and libxml2's own limits stay on. (Foundation's `XMLParser` was used before; on Linux it leaks
/// about 70 bytes per error it reports, found by the FuzzServeRequests harness.)
package enum XMLEventReader {
    /// Why a body was refused.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// Reads `body`, reporting to `handler`.
    package static func read(_ body: Data, maximumDepth: Int = 64, into handler: some XMLEventHandler) throws(Failure) {
        let state = State(handler: handler, maximumDepth: maximumDepth)
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { context, localName, _, uri, _, _, count, _, attributes in
            State.from(context).start(localName, uri, Int(count), attributes)
        }
        sax.endElementNs = { context, localName, _, uri in
            State.from(context).end(localName, uri)
        }
        sax.characters = { context, characters, length in State.from(context).characters(characters, Int(length)) }
        sax.cdataBlock = { context, characters, length in State.from(context).characters(characters, Int(length)) }
        sax.internalSubset = { context, _, _, _ in State.from(context).stop(Failure("a DOCTYPE is not allowed in a request body")) }
        sax.serror = { context, error in
            guard let context, let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
            let message = error.pointee.message.map { String(cString: $0) } ?? "XML error"
            State.from(context).fail(Failure("\(message.trimmingCharacters(in: .whitespacesAndNewlines)) (line \(error.pointee.line))"))
        }
        let unmanaged = Unmanaged.passRetained(state)
        defer { unmanaged.release() }
        guard let context = xmlCreatePushParserCtxt(&sax, unmanaged.toOpaque(), nil, 0, nil) else { throw Failure("out of memory") }
        state.context = context
        defer {
            if let document = context.pointee.myDoc { xmlFreeDoc(document) }
            xmlFreeParserCtxt(context)
        }
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
        let result = body.withUnsafeBytes { buffer in
            xmlParseChunk(context, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(clamping: buffer.count), 1)
        }
        if let failure = state.failure { throw failure }
        if result != 0 || state.depth != 0 || !state.sawRoot { throw Failure("not a complete XML document (libxml2 error \(result))") }
    }

    /// The parse's state, reached from libxml2's callbacks.
    private final class State {
        let handler: any XMLEventHandler
        let maximumDepth: Int
        var context: xmlParserCtxtPtr?
        var failure: Failure?
        var depth = 0
        var sawRoot = false

        init(handler: any XMLEventHandler, maximumDepth: Int) {
            self.handler = handler
            self.maximumDepth = maximumDepth
        }

        static func from(_ pointer: UnsafeMutableRawPointer?) -> State {
            Unmanaged<State>.fromOpaque(pointer!).takeUnretainedValue()
        }

        func stop(_ reason: Failure) {
            guard failure == nil else { return }
            failure = reason
            if let context { xmlStopParser(context) }
        }

        func fail(_ reason: Failure) { if failure == nil { failure = reason } }

        func start(_ localName: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?, _ count: Int,
                   _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
            guard failure == nil else { return }
            guard depth < maximumDepth else { return stop(Failure("elements nested more than \(maximumDepth) deep")) }
            var list: [XMLAttribute] = []
            if let attributes, count > 0 {
                // Five pointers per attribute: local name, prefix, URI, value start, value end.
                for index in 0..<min(count, 256) {
                    let base = attributes + index * 5
                    guard let name = base[0], let start = base[3], let end = base[4] else { continue }
                    let value = String(decoding: UnsafeBufferPointer(start: start, count: max(0, end - start)), as: UTF8.self)
                    list.append(XMLAttribute(name: PropertyName(namespace: base[2].map { String(cString: $0) } ?? "", name: String(cString: name)),
                                             value: value))
                }
            }
            let element = PropertyName(namespace: uri.map { String(cString: $0) } ?? "", name: localName.map { String(cString: $0) } ?? "")
            do {
                try handler.start(element, attributes: list, depth: depth)
            } catch {
                return stop(error)
            }
            sawRoot = true
            depth += 1
        }

        func end(_ localName: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?) {
            guard failure == nil, depth > 0 else { return }
            depth -= 1
            handler.end(PropertyName(namespace: uri.map { String(cString: $0) } ?? "", name: localName.map { String(cString: $0) } ?? ""), depth: depth)
        }

        func characters(_ characters: UnsafePointer<xmlChar>?, _ length: Int) {
            guard failure == nil, let characters, length > 0 else { return }
            do {
                try handler.text(String(decoding: UnsafeBufferPointer(start: characters, count: length), as: UTF8.self))
            } catch {
                stop(error)
            }
        }
    }
}
