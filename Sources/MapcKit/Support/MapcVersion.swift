/// This release of mapc, as `mapc --version` prints it.
public enum MapcVersion {
    /// The version number.
    public static let current = "0.2.0"
}
