internal import CMapcSystem

/// This release of mapc, as `mapc --version` prints it and a store's history records it.
package enum MapcVersion {
    /// The version number.
    package static let current = "0.2.0"

    /// The running executable's GNU build ID (the linker's hash of its contents) in lowercase hex,
    /// or nil for an executable without one (another platform, a linker told not to write it).
    /// Two builds of one version number differ here: a fleet upgraded in stages, or a store
    /// migrated by a build later withdrawn, is told apart by it.
    package static let buildID: String? = {
        var bytes = [UInt8](repeating: 0, count: 64)
        let length = Int(mapc_build_id(&bytes, bytes.count))
        return length > 0 ? Hex.lowercase(bytes.prefix(length)) : nil
    }()

    /// The version with the first twelve digits of the build ID, as `--version` prints it:
    /// `0.2.0 (build 1a2b3c4d5e6f)`, or `0.2.0` alone without a build ID.
    package static var described: String {
        buildID.map { "\(current) (build \($0.prefix(12)))" } ?? current
    }

    /// What a store's history records as the tool that made a step: `mapc 0.2.0 (build 1a2b3c4d5e6f)`.
    package static var tool: String { "mapc " + described }
}
