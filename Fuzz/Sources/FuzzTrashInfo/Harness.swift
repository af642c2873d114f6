// libFuzzer harness for trash records: FreeDesktop `.trashinfo` files (`TrashInfo.parse(_:name:timeZone:)`)
// and the names that are their own records in a network trash (`ProviderTrashVolume.record(inName:)`).
// A trash on a remote is written by whoever can write there, and a desktop trash by every tool on
// the machine, so its records are untrusted input. A malformed record is an expected outcome
// (`FileProviderError.malformedResponse`); a crash, a trap or a hang is not. What parses must
// encode and parse again to the same path (the round trip the gateway relies on when it restores).
import Foundation
import GatewayCore

private let utc = TimeZone(secondsFromGMT: 0)!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrashInfo(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(UnsafeRawBufferPointer(start: start, count: count))
    do {
        let info = try TrashInfo.parse(data, name: "fuzz", timeZone: utc)
        let again = try TrashInfo.parse(info.encoded(timeZone: utc), name: "fuzz", timeZone: utc)
        if again.path != info.path { fatalError("path did not survive a round trip: \(info.path.debugDescription)") }
        if let date = info.deletionDate, let back = again.deletionDate, abs(date.timeIntervalSince(back)) >= 1 {
            fatalError("date did not survive a round trip")
        }
    } catch {
        _ = String(describing: error)
    }
    // The same bytes as the name of an item in a network trash, which is its own record.
    if let record = ProviderTrashVolume.record(inName: String(decoding: data, as: UTF8.self)) {
        let name = ProviderTrashVolume.recordName(for: record, random: "r")
        if ProviderTrashVolume.record(inName: name)?.path != record.path { fatalError("record name did not survive a round trip") }
    }
    return 0
}
