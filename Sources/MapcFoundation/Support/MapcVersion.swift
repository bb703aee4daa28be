/// This release of mapc, as `mapc --version` prints it.
package enum MapcVersion {
    /// The version number.
    package static let current = "0.2.0"
}
