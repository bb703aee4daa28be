import Foundation
import MapcFoundation
import MapcModel

/// How Core Data keeps a value of a binary attribute that allows external storage, in its column:
/// a marker byte, then either the bytes themselves (`01`, a value kept inline) or the name of the
/// file that holds them in the store's `_EXTERNAL_DATA` folder (`02`, then the file's UUID as text
/// and a NUL). An attribute that does not allow external storage keeps the bytes alone.
///
/// mapc copies such a column as it is while the stored form stays the same (the files go with the
/// store: `CoreDataExternalData`). When a step leaves the marked form (the setting turned off, or a
/// Core Data store's values copied into mapc's format), each value is read out of its marker or
/// its file into the bytes alone; when it enters it (turned on, or bytes from mapc's format into a
/// Core Data store), the bytes get the inline marker. A value in neither form is refused, never
/// guessed at.
package enum CoreDataExternalValue {
    /// The marker of a value kept inline.
    static let inline: UInt8 = 0x01
    /// The marker of a value kept in a file of the external data folder.
    static let inFile: UInt8 = 0x02

    /// Whether a binary attribute's values are kept marked in a store of this format: in Core
    /// Data's, when the attribute allows external storage.
    package static func isMarked(_ format: StoreFormat, allowsExternalStorage: Bool) -> Bool {
        allowsExternalStorage && format.identifier == StoreFormat.coreData.identifier
    }

    /// What a step does to a binary value whose stored form changes (`isMarked` on one side
    /// only); nil when it does not (or a value is not bytes on either side).
    package enum Conversion: Sendable {
        /// The setting was on and is off: the bytes, out of their marker or their file (in the
        /// folder of the store the values were first read from).
        case readOut(CoreDataExternalData)
        /// The setting was off and is on: the bytes, after the inline marker.
        case markInline

        /// The conversion between a source and a destination attribute of two stores, or nil.
        package static func between(_ source: Attribute, of sourceFormat: StoreFormat, _ destination: Attribute, of destinationFormat: StoreFormat,
                                    files: CoreDataExternalData?) -> Conversion? {
            let marked = isMarked(source, in: sourceFormat)
            guard holdsBytes(source.type), holdsBytes(destination.type), marked != isMarked(destination, in: destinationFormat) else { return nil }
            guard marked else { return .markInline }
            return files.map(Conversion.readOut) ?? .readOut(CoreDataExternalData(store: ""))
        }

        /// The value converted; a value that is not bytes is left as it is. Throws, saying what
        /// is wrong, for a value in neither of Core Data's forms or a file that cannot be read.
        package func apply(_ value: Value) throws -> Value {
            guard case .binary(let data) = value else { return value }
            switch self {
            case .markInline: return CoreDataExternalValue.markedInline(value)
            case .readOut(let files): return .binary(try CoreDataExternalValue.bytes(of: data, files: files))
            }
        }
    }

    /// Whether values of `attribute` are kept marked in a store of `format` (a binary or
    /// transformable attribute allowing external storage, in Core Data's format).
    package static func isMarked(_ attribute: Attribute, in format: StoreFormat) -> Bool {
        holdsBytes(attribute.type) && isMarked(format, allowsExternalStorage: attribute.allowsExternalStorage)
    }

    /// Whether any attribute of `schema` keeps its values marked in a store of `format`: without
    /// one (most stores), values need no look at their attributes on the way in or out.
    package static func anyMarked(in schema: Schema, format: StoreFormat) -> Bool {
        schema.entities.contains { $0.attributes.contains { isMarked($0, in: format) } }
    }

    /// Whether an attribute of `type` holds bytes, which external storage may keep: binary and
    /// transformable (its value transformer's bytes).
    package static func holdsBytes(_ type: AttributeType) -> Bool {
        type == .binary || type == .transformable
    }

    /// A value given to `attribute` (its default, an expression's or a policy's bytes) in the form
    /// a store of `format` keeps it.
    package static func storedForm(of value: Value, for attribute: Attribute, in format: StoreFormat) -> Value {
        isMarked(attribute, in: format) ? markedInline(value) : value
    }

    /// A value of `attribute` as a store of `format` holds it, as the app reads it: the bytes, out
    /// of their marker or their file, where the attribute's values are kept marked; any other as
    /// it is. Expressions and policies work on these values, never on the marker.
    package static func readable(_ value: Value, of attribute: Attribute, in format: StoreFormat, files: CoreDataExternalData?) throws -> Value {
        guard case .binary(let stored) = value, isMarked(attribute, in: format) else { return value }
        return .binary(try bytes(of: stored, files: files ?? CoreDataExternalData(store: "")))
    }

    /// Bytes as an attribute kept marked stores them: after the inline marker.
    package static func markedInline(_ value: Value) -> Value {
        guard case .binary(let data) = value else { return value }
        return .binary(Data([inline]) + data)
    }

    /// What a column value of an attribute that allows external storage holds.
    package enum Form {
        /// The bytes themselves (no value, or the inline marker's).
        case bytes(Data)
        /// The name (a UUID) of the file in the external data folder that holds them.
        case file(String)
    }

    /// The form of a stored value, or a message saying why it is in none of Core Data's.
    package static func form(of stored: Data) -> Result<Form, MapcError> {
        guard let marker = stored.first else { return .success(.bytes(stored)) }
        switch marker {
        case inline:
            return .success(.bytes(stored.dropFirst()))
        case inFile:
            var name = stored.dropFirst()
            if name.last == 0 { name = name.dropLast() }
            guard let text = String(data: name, encoding: .utf8), let uuid = UUID(uuidString: text), uuid.uuidString.caseInsensitiveCompare(text) == .orderedSame else {
                return .failure(.store("the value names a file of Core Data's external data that is not a UUID (\(Hex.lowercase(Array(stored.prefix(48))))…); mapc reads only what Core Data writes there"))
            }
            return .success(.file(text))
        default:
            return .failure(.store("the value's first byte is \(String(format: "%02x", marker)), neither Core Data's marker of a value kept inline (01) nor of one kept in a file (02): "
                                   + "mapc does not read it as the attribute's bytes rather than guess; please report the store's Core Data version"))
        }
    }

    /// Why a value given for a Core Data store's attribute that allows external storage cannot be
    /// stored as it is (`load` and `Store.insert` take the column's form: `dump` writes it), or nil.
    package static func problem(storing value: Value) -> String? {
        guard case .binary(let data) = value, case .failure = form(of: data) else { return nil }
        return "an attribute that allows external storage keeps Core Data's form in a Core Data store, as `mapc dump` writes it: give 01 followed by the bytes "
            + "(base64 of both), or 02, the UUID of a file in the store's _EXTERNAL_DATA folder and a NUL; its first byte is \(String(format: "%02x", data.first ?? 0)). "
            + "For a data file holding the bytes alone, say so at its top: \"layout\": \"mapc\""
    }

    /// The bytes a column value of an attribute that allows external storage stands for.
    package static func bytes(of stored: Data, files: CoreDataExternalData) throws -> Data {
        let text: String
        switch form(of: stored) {
        case .failure(let problem): throw problem
        case .success(.bytes(let bytes)): return bytes
        case .success(.file(let name)): text = name
        }
        // Links followed (a copy may link its files); only a regular file is read (a FIFO would block).
        let path = Files.realPath((files.dataFolder as NSString).appendingPathComponent(text))
        switch Files.kind(of: path) {
        case .regularFile: break
        case .missing:
            throw MapcError.store("the value is kept in Core Data's external file \(text), which is not in \(files.dataFolder): "
                                 + "the store's support folder is missing or incomplete; copy the store with its hidden .<name>_SUPPORT folder")
        default:
            throw MapcError.store("the value is kept in Core Data's external file \(path), which is not a regular file (a folder, a FIFO or a device): "
                                 + "mapc reads only files there; put the value's file back")
        }
        do { return try Data(contentsOf: Files.fileURL(path)) } catch {
            throw MapcError.store("the value is kept in Core Data's external file \(path), which cannot be read: \(Files.reason(of: error))")
        }
    }
}
